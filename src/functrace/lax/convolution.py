"""conv_general_dilated: N-d convolution with strides, padding, dilations and groups.

One primitive block (definition, NumPy impl, abstract eval, JVP, transposes and
batching rule), the layout helpers (``ConvDimensionNumbers``,
``conv_dimension_numbers``, ``conv_general_permutations``, ``conv_general_shape_tuple``,
``padtype_to_pads``) and the wrappers ``conv``, ``conv_with_general_padding`` and
``conv_transpose``. JAX's semantics: the operation is a cross-correlation (the kernel
is not flipped); ``lhs`` is (batch, feature, spatial...) and ``rhs`` (out feature,
in feature, spatial...) in the layouts the dimension numbers name.

Decisions:

* Params are normalised in the wrapper: strides and dilations are tuples of ints,
  ``padding`` a tuple of ``(low, high)`` int pairs (string paddings resolved against
  the undilated lhs and the rhs-dilated kernel, as in JAX), ``dimension_numbers`` a
  ``ConvDimensionNumbers`` of int tuples.
* The impl (``conv_impl.py``) is an im2col over a strided view (``sliding_window_view``
  of the padded, lhs-dilated input, windows read every ``rhs_dilation``-th element,
  positions every stride) followed by one BLAS product per group and block of batch rows, so it runs
  at matrix-product speed; the patch order follows the memory order of the input
  (channels innermost for NHWC inputs). Few output positions with few batch rows (the
  kernel gradient of a small-channel layer) stack all positions in one product. A
  stride-1 convolution whose input has fewer positions times out features than its
  output has positions times in features (the lhs transpose of a layer with fewer out
  than in channels) runs as one product per tap then shifted adds (col2im): it writes
  ``out features x taps`` values per input position instead of gathering
  ``in features x taps`` per output position.
* The transposes are convolutions again (the lhs one of the cotangent with the flipped
  kernel, lhs-dilated by the strides; the rhs one of the input with the cotangent, batch
  and feature roles swapped, feature groups becoming batch groups and back), so every
  derivative order and transposes of transposes work.
* Batching folds the vmapped axis into the batch (lhs batched), the output features
  (rhs batched) or the feature/batch groups (both): one convolution, no loop.
* Under ``jit`` the primitive has no ``DriverRule``: the driver calls the impl (the
  im2col and BLAS products above). A ``scan``/``fori_loop`` whose body holds a
  convolution has no native-loop form, so it stays a Python loop over the compiled body.
* ``padding`` as a string with ``lhs_dilation`` > 1 is an error, as in JAX (use
  explicit pairs or ``conv_transpose``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from functrace import core
from functrace.core import Primitive, ShapedArray
from functrace.interpreters import ad, batching
from functrace.lax._util import (
    check_dtype_kind,
    check_same_dtypes,
    conv_transpose_pads,
    operator_index,
    padtype_to_pads,
    register_checked,
)
from functrace.lax.base import convert_element_type, reshape, transpose
from functrace.lax.composites import full
from functrace.lax.contraction import _check_preferred, check_precision
from functrace.lax.conv_impl import conv_impl as _conv_impl
from functrace.lax.conv_impl import dilate_dim as _dilate_dim
from functrace.lax.shapes import rev

_NAME = "conv_general_dilated"


class ConvDimensionNumbers(NamedTuple):
    """Where the dimensions of a convolution's operands and output are.

    ``lhs_spec`` = (batch dim, feature dim, spatial dims...), ``rhs_spec`` = (out
    feature dim, in feature dim, spatial dims...), ``out_spec`` = (batch dim, feature
    dim, spatial dims...), each a tuple of axis indices of that array."""

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def conv_general_permutations(dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    """The (lhs, rhs, out) axis permutations of three layout strings such as
    ``("NHWC", "HWIO", "NHWC")``: batch/out-feature first, feature/in-feature second,
    then the spatial axes in the order they appear in the rhs string."""
    dn = dimension_numbers
    if not (isinstance(dn, (tuple, list)) and len(dn) == 3 and all(isinstance(s, str) for s in dn)):
        raise TypeError(
            f"conv_general_permutations: expected three layout strings (lhs, rhs, out), "
            f"got {dimension_numbers!r}."
        )
    specs = tuple(dn)
    lhs_s, rhs_s, out_s = specs
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for what, spec, (a, b) in zip(("lhs", "rhs", "out"), specs, pairs):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise ValueError(
                f"conv_general_permutations: expected the {what} layout to name {a!r} and "
                f"{b!r} once each and no letter twice, got {spec!r}."
            )
    spatial = [set(s) - set(p) for s, p in zip(specs, pairs)]
    if not (spatial[0] == spatial[1] == spatial[2]) or not (len(lhs_s) == len(rhs_s) == len(out_s)):
        raise ValueError(
            f"conv_general_permutations: expected the same spatial letters in all three "
            f"layouts, got {specs!r}."
        )

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        sp = [i for i, c in enumerate(spec) if c not in pair]
        sp.sort(key=lambda i: rhs_s.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *sp)

    return tuple(perm(s, p) for s, p in zip(specs, pairs))


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: Any
) -> ConvDimensionNumbers:
    """Normalise ``dimension_numbers`` (None: NCHW/OIHW/NCHW, a ConvDimensionNumbers,
    or three layout strings) to a :class:`ConvDimensionNumbers` for these shapes."""
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(
            f"conv_dimension_numbers: expected lhs and rhs of the same rank, got shapes "
            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}."
        )
    if dimension_numbers is None:
        canon = tuple(range(nd))
        return ConvDimensionNumbers(canon, canon, canon)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        specs = tuple(tuple(int(a) for a in s) for s in dimension_numbers)
    elif isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3:
        if all(isinstance(s, str) for s in dimension_numbers):
            for what, s in zip(("lhs", "rhs", "out"), dimension_numbers):
                if len(s) != nd:
                    raise TypeError(
                        f"conv_dimension_numbers: expected a {what} layout of {nd} letters "
                        f"for operands of rank {nd}, got {s!r}."
                    )
            specs = conv_general_permutations(dimension_numbers)
        else:
            try:
                specs = tuple(tuple(int(a) for a in s) for s in dimension_numbers)
            except TypeError:
                raise TypeError(
                    f"conv_dimension_numbers: expected None, a ConvDimensionNumbers or "
                    f"three layout strings, got {dimension_numbers!r}."
                ) from None
    else:
        raise TypeError(
            f"conv_dimension_numbers: expected None, a ConvDimensionNumbers or three "
            f"layout strings, got {dimension_numbers!r}."
        )
    for what, s in zip(("lhs", "rhs", "out"), specs):
        if sorted(s) != list(range(nd)):
            raise ValueError(
                f"conv_dimension_numbers: expected the {what} spec to be a permutation of "
                f"range({nd}), got {s}."
            )
    return ConvDimensionNumbers(*specs)


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: Any,
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """Output shape of a convolution in canonical (NC..., OI...) layouts."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    sp = []
    for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads):
        sp.append(max(0, (int(n) + lo + hi - int(k)) // int(s) + 1))
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0]), *sp)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """Output shape of an undilated convolution with these layouts (strings or a
    ConvDimensionNumbers) and padding (a string or ``(low, high)`` pairs)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lt = [int(lhs_shape[i]) for i in dn.lhs_spec]
    rt = [int(rhs_shape[i]) for i in dn.rhs_spec]
    out = conv_shape_tuple(lt, rt, window_strides, padding)
    res = [0] * len(out)
    for j, a in enumerate(dn.out_spec):
        res[a] = out[j]
    return tuple(res)


# ---------------------------------------------------------------------------
# The primitive
# ---------------------------------------------------------------------------


def _positive_ints(name: str, xs: tuple[int, ...], n: int) -> None:
    if len(xs) != n or any(x < 1 for x in xs):
        raise ValueError(f"{_NAME}: expected {name} of {n} positive ints, got {xs}.")


def _conv_abstract(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: np.dtype | None,
) -> ShapedArray:
    nd = lhs.ndim
    if nd < 2 or rhs.ndim != nd:
        raise TypeError(
            f"{_NAME}: expected lhs and rhs of the same rank, at least 2, got shapes "
            f"{lhs.shape} and {rhs.shape}."
        )
    ns = nd - 2
    dtype = check_same_dtypes(_NAME, lhs, rhs)
    check_dtype_kind(_NAME, lhs, "iufc", "a numeric")
    try:
        _check_preferred(lhs, preferred_element_type)
    except TypeError as e:  # the same rule as dot_general's, under this function's name
        raise TypeError(str(e).replace("dot_general:", f"{_NAME}:", 1)) from None
    _positive_ints("window_strides", window_strides, ns)
    _positive_ints("lhs_dilation", lhs_dilation, ns)
    _positive_ints("rhs_dilation", rhs_dilation, ns)
    if len(padding) != ns:
        raise ValueError(f"{_NAME}: expected padding as {ns} (low, high) pairs, got {padding}.")
    dn = dimension_numbers
    ls = [lhs.shape[i] for i in dn.lhs_spec]
    rs = [rhs.shape[i] for i in dn.rhs_spec]
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1:
        raise ValueError(
            f"{_NAME}: expected feature_group_count and batch_group_count >= 1, got {g} and {b}."
        )
    if g > 1 and b > 1:
        raise ValueError(
            f"{_NAME}: expected at most one of feature_group_count and batch_group_count "
            f"above 1, got {g} and {b}."
        )
    if ls[1] != rs[1] * g:
        raise ValueError(
            f"{_NAME}: expected lhs features ({ls[1]}) = rhs input features ({rs[1]}) x "
            f"feature_group_count ({g}), for lhs shape {lhs.shape} and rhs shape "
            f"{rhs.shape}."
        )
    if rs[0] % g or rs[0] % b:
        raise ValueError(
            f"{_NAME}: expected rhs output features ({rs[0]}) divisible by "
            f"feature_group_count ({g}) and batch_group_count ({b}), for rhs shape "
            f"{rhs.shape}."
        )
    if ls[0] % b:
        raise ValueError(
            f"{_NAME}: expected the lhs batch ({ls[0]}) divisible by batch_group_count "
            f"({b}), for lhs shape {lhs.shape}."
        )
    lds = [_dilate_dim(n, d) for n, d in zip(ls[2:], lhs_dilation)]
    rds = [_dilate_dim(k, d) for k, d in zip(rs[2:], rhs_dilation)]
    if any(n + lo + hi < 0 for n, (lo, hi) in zip(lds, padding)):
        raise ValueError(
            f"{_NAME}: expected negative padding no larger than the (lhs-dilated) spatial "
            f"sizes {tuple(lds)}, got padding={padding} for lhs shape {lhs.shape}."
        )
    canon = conv_shape_tuple([ls[0], ls[1], *lds], [rs[0], rs[1], *rds], window_strides, padding, b)
    shape = [0] * nd
    for j, a in enumerate(dn.out_spec):
        shape[a] = canon[j]
    if preferred_element_type is not None:
        return ShapedArray(tuple(shape), preferred_element_type)
    return ShapedArray(tuple(shape), dtype, lhs.weak_type and rhs.weak_type)


conv_general_dilated_p = register_checked(
    Primitive("conv_general_dilated"), _conv_impl, _conv_abstract
)


def _as_ints(name: str, what: str, xs: Any, n: int) -> tuple[int, ...]:
    if xs is None:
        return (1,) * n
    try:
        out = tuple(int(operator_index(x)) for x in xs)
    except TypeError:
        raise TypeError(f"{name}: expected {what} as a sequence of {n} ints, got {xs!r}.") from None
    if len(out) != n:
        raise ValueError(f"{name}: expected {what} as a sequence of {n} ints, got {xs!r}.")
    return out


def _normalize_padding(
    name: str,
    padding: Any,
    in_shape: Sequence[int],
    window: Sequence[int],
    strides: Sequence[int],
) -> tuple[tuple[int, int], ...]:
    if isinstance(padding, str) or hasattr(padding, "name"):
        return tuple(padtype_to_pads(in_shape, window, strides, padding, fname=name))
    try:
        pairs = tuple((int(operator_index(lo)), int(operator_index(hi))) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name}: expected padding 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
            f"(low, high) int pairs, got {padding!r}."
        ) from None
    if len(pairs) != len(in_shape):
        raise ValueError(
            f"{name}: expected padding as {len(in_shape)} (low, high) pairs (one per spatial "
            f"dimension), got {padding!r}."
        )
    return pairs


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """General N-d convolution (a cross-correlation, as in JAX and PyTorch's ``conv``).

    ``lhs``: (batch, in features, spatial...), ``rhs``: (out features, in features /
    feature_group_count, spatial...) in the layouts of ``dimension_numbers`` (None:
    NCHW/OIHW/NCHW; a :class:`ConvDimensionNumbers`; or strings like
    ``("NHWC", "HWIO", "NHWC")``). ``padding``: "SAME", "SAME_LOWER", "VALID" or
    ``(low, high)`` pairs per spatial dim (negative pads crop). ``lhs_dilation`` puts
    ``d - 1`` zeros between input elements (a transposed convolution),
    ``rhs_dilation`` between kernel taps (atrous). ``feature_group_count`` splits the
    features into groups (depthwise when equal to the features),
    ``batch_group_count`` the batch (each group of output features sees one slice).
    ``precision`` is validated and ignored on CPU."""
    check_precision(_NAME, precision)
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    if la.ndim < 2 or ra.ndim != la.ndim:
        raise TypeError(
            f"{_NAME}: expected lhs and rhs of the same rank, at least 2, got shapes "
            f"{la.shape} and {ra.shape}."
        )
    ns = la.ndim - 2
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    strides = _as_ints(_NAME, "window_strides", window_strides, ns)
    ldil = _as_ints(_NAME, "lhs_dilation", lhs_dilation, ns)
    rdil = _as_ints(_NAME, "rhs_dilation", rhs_dilation, ns)
    _positive_ints("window_strides", strides, ns)
    _positive_ints("rhs_dilation", rdil, ns)
    in_sp = [la.shape[i] for i in dn.lhs_spec[2:]]
    k_sp = [_dilate_dim(ra.shape[i], d) for i, d in zip(dn.rhs_spec[2:], rdil)]
    if isinstance(padding, str) and any(d > 1 for d in ldil):
        raise ValueError(
            f"{_NAME}: expected explicit (low, high) padding pairs with lhs_dilation "
            f"{ldil}, got padding {padding!r}. A string padding is not defined for a "
            f"dilated input: give the pairs, or use conv_transpose."
        )
    pads = _normalize_padding(_NAME, padding, in_sp, k_sp, strides)
    for what, v in (
        ("feature_group_count", feature_group_count),
        ("batch_group_count", batch_group_count),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{_NAME}: expected {what} as a positive int, got {v!r}.")
    prec = tuple(precision) if isinstance(precision, list) else precision
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=strides,
        padding=pads,
        lhs_dilation=ldil,
        rhs_dilation=rdil,
        dimension_numbers=dn,
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count),
        precision=prec,
        preferred_element_type=pet,
    )


# ---------------------------------------------------------------------------
# Transposes (each one a convolution) and the JVP
# ---------------------------------------------------------------------------


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def _conv_transpose_lhs(
    ct: Any,
    lhs: ad.UndefPrimal,
    rhs: Any,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: np.dtype | None,
) -> Any:
    # dx is the cotangent, dilated by the strides, correlated with the flipped kernel
    # (in and out features swapped) at stride lhs_dilation; dx in the lhs layout.
    lhs_aval = lhs.aval
    lspec, rspec, ospec = dimension_numbers
    nd = len(lhs_aval.shape)
    ns = nd - 2
    ct_dtype = core.get_aval(ct).dtype
    w = transpose(convert_element_type(rhs, ct_dtype), rspec)  # (O, I, K...)
    o_feat, i_feat, *ks = core.get_aval(w).shape
    groups = max(feature_group_count, batch_group_count)
    og = o_feat // groups
    # (G*og, I, K) -> (G, og, I, K) -> (G, I, og, K) -> (G*I, og, K), spatially flipped
    w = reshape(w, (groups, og, i_feat, *ks))
    w = transpose(w, (0, 2, 1, *range(3, 3 + ns)))
    w = reshape(w, (groups * i_feat, og, *ks))
    w = rev(w, tuple(range(2, 2 + ns)))
    in_sp = [lhs_aval.shape[i] for i in lspec[2:]]
    out_sp = [core.get_aval(ct).shape[i] for i in ospec[2:]]
    pads = []
    for n_, k, s, ld, rd, (lo, _hi), p in zip(
        in_sp, ks, window_strides, lhs_dilation, rhs_dilation, padding, out_sp
    ):
        kd = _dilate_dim(k, rd)
        lo2 = kd - 1 - lo
        hi2 = (n_ - 1) * ld + kd - _dilate_dim(p, s) - lo2
        pads.append((lo2, hi2))
    canon = tuple(range(nd))
    # without batch groups dx comes out in the lhs layout directly (no transpose after)
    dx_spec = lspec if batch_group_count == 1 else canon
    dx = conv_general_dilated_p.bind(
        ct,
        w,
        window_strides=lhs_dilation,
        padding=tuple(pads),
        lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(ospec, canon, dx_spec),
        feature_group_count=groups,
        batch_group_count=1,
        precision=precision,
        preferred_element_type=None,
    )  # (N / B, G*I, S...)
    if batch_group_count > 1:
        nb = core.get_aval(dx).shape[0]
        dx = reshape(dx, (nb, groups, i_feat, *in_sp))
        dx = transpose(dx, (1, 0, *range(2, 3 + ns)))
        dx = reshape(dx, (groups * nb, i_feat, *in_sp))
        dx = transpose(dx, _inverse(lspec))
    return convert_element_type(dx, lhs_aval.dtype, lhs_aval.weak_type)


def _conv_transpose_rhs(
    ct: Any,
    lhs: Any,
    rhs: ad.UndefPrimal,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: np.dtype | None,
) -> Any:
    # dw[o, i, k] = sum_{n, p} ct[n, o, p] x_padded[n, i, p*s + k*rd]: a convolution of
    # the input (features as batch, batch as features) with the cotangent as kernel, at
    # stride rhs_dilation and kernel dilation window_strides. Feature groups become batch
    # groups and batch groups feature groups.
    rhs_aval = rhs.aval
    lspec, rspec, ospec = dimension_numbers
    ct_dtype = core.get_aval(ct).dtype
    x = convert_element_type(lhs, ct_dtype)
    la = core.get_aval(x)
    in_sp = [la.shape[i] for i in lspec[2:]]
    ks = [rhs_aval.shape[i] for i in rspec[2:]]
    out_sp = [core.get_aval(ct).shape[i] for i in ospec[2:]]
    pads = []
    for n_, k, s, ld, rd, (lo, _hi), p in zip(
        in_sp, ks, window_strides, lhs_dilation, rhs_dilation, padding, out_sp
    ):
        hi2 = (k - 1) * rd + _dilate_dim(p, s) - _dilate_dim(n_, ld) - lo
        pads.append((lo, hi2))

    def swap(spec: tuple[int, ...]) -> tuple[int, ...]:
        return (spec[1], spec[0], *spec[2:])

    dw = conv_general_dilated_p.bind(
        x,
        ct,
        window_strides=rhs_dilation,
        padding=tuple(pads),
        lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(swap(lspec), swap(ospec), swap(rspec)),
        feature_group_count=batch_group_count,
        batch_group_count=feature_group_count,
        precision=precision,
        preferred_element_type=None,
    )
    return convert_element_type(dw, rhs_aval.dtype, rhs_aval.weak_type)


# d conv(x, w) = conv(dx, w) + conv(x, dw)
ad.defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)


# ---------------------------------------------------------------------------
# Batching: fold the vmapped axis into the batch, the output features or the groups
# ---------------------------------------------------------------------------


def _conv_batch(vals: Sequence[Any], bdims: Sequence[Any], **params: Any) -> tuple[Any, int]:
    lhs, rhs = vals
    lbd, rbd = bdims
    lspec, rspec, ospec = params["dimension_numbers"]
    g, b = params["feature_group_count"], params["batch_group_count"]
    nd = len(lspec)
    ns = nd - 2
    canon = tuple(range(nd))
    # Canonical layouts with the vmapped axis first: (V, N, C, S...) and (V, O, I, K...).
    if lbd is not None:
        lhs = transpose(batching.moveaxis(lhs, lbd, 0), (0, *(1 + a for a in lspec)))
    else:
        lhs = transpose(lhs, lspec)
    if rbd is not None:
        rhs = transpose(batching.moveaxis(rhs, rbd, 0), (0, *(1 + a for a in rspec)))
    else:
        rhs = transpose(rhs, rspec)
    p = dict(params, dimension_numbers=ConvDimensionNumbers(canon, canon, canon))

    def out_layout(out: Any) -> tuple[Any, int]:
        # (V, N, O, P...) canonical -> the output layout, vmapped axis first
        perm = [0] * (nd + 1)
        for j, a in enumerate(ospec):
            perm[1 + a] = 1 + j
        return transpose(out, tuple(perm)), 0

    if lbd is not None and rbd is None:
        v, n, c, *s_in = core.get_aval(lhs).shape
        # batch index (b, v, n_local): batch groups stay contiguous
        x = reshape(lhs, (v, b, n // b, c, *s_in))
        x = transpose(x, (1, 0, *range(2, nd + 2)))
        x = reshape(x, (b * v * (n // b), c, *s_in))
        out = conv_general_dilated_p.bind(x, rhs, **p)
        _, o, *s_out = core.get_aval(out).shape  # batch v * (n // b)
        return out_layout(reshape(out, (v, n // b, o, *s_out)))
    if rbd is not None and lbd is None:
        v, o, i, *s_k = core.get_aval(rhs).shape
        grp = g * b
        # out-feature index (group, v, o_local): the groups stay contiguous
        w = reshape(rhs, (v, grp, o // grp, i, *s_k))
        w = transpose(w, (1, 0, *range(2, nd + 2)))
        w = reshape(w, (grp * v * (o // grp), i, *s_k))
        out = conv_general_dilated_p.bind(lhs, w, **p)
        n_out, _, *s_out = core.get_aval(out).shape
        out = reshape(out, (n_out, grp, v, o // grp, *s_out))
        out = transpose(out, (2, 0, 1, *range(3, 4 + ns)))
        return out_layout(reshape(out, (v, n_out, o, *s_out)))
    # Both batched: the vmapped axis becomes the outermost level of groups.
    v, n, c, *s_in = core.get_aval(lhs).shape
    _, o, i, *s_k = core.get_aval(rhs).shape
    if v == 0:  # no groups to fold it into: the empty result of one example's shape
        la, ra = core.get_aval(lhs), core.get_aval(rhs)
        one = _conv_abstract(
            ShapedArray((n, c, *s_in), la.dtype), ShapedArray((o, i, *s_k), ra.dtype), **p
        )
        return out_layout(full((0, *one.shape), 0, one.dtype))
    w = reshape(rhs, (v * o, i, *s_k))
    if b > 1:
        x = reshape(lhs, (v * n, c, *s_in))  # batch index (v, b, n_local)
        out = conv_general_dilated_p.bind(x, w, **dict(p, batch_group_count=v * b))
    else:
        x = transpose(lhs, (1, 0, *range(2, nd + 1)))  # (N, V, C, S...)
        x = reshape(x, (n, v * c, *s_in))
        out = conv_general_dilated_p.bind(x, w, **dict(p, feature_group_count=v * g))
    n_out, _, *s_out = core.get_aval(out).shape
    out = reshape(out, (n_out, v, o, *s_out))
    return out_layout(transpose(out, (1, 0, *range(2, 3 + ns))))


batching.batching_rules[conv_general_dilated_p] = _conv_batch


# ---------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``conv_general_dilated`` in NCHW/OIHW layouts without dilation or groups."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """``conv_general_dilated`` in NCHW/OIHW layouts with explicit dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


_TRANSPOSE_LAYOUTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Any,
    rhs: Any,
    strides: Sequence[int],
    padding: Any,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Transposed ("deconvolution") convolution, as JAX's ``lax.conv_transpose``: the
    input is dilated by ``strides`` and convolved at stride 1. Default layouts are
    channels-last (``NHWC``/``HWIO``); ``padding`` "SAME" gives ``in * stride``
    outputs, "VALID" ``in * stride + max(k - stride, 0)``, or explicit pairs.
    ``transpose_kernel=True`` flips the kernel spatially and swaps its in/out feature
    axes, giving the gradient of ``conv_general_dilated`` with respect to its input."""
    la, ra = core.get_aval(lhs), core.get_aval(rhs)
    nd = la.ndim
    if nd < 2 or ra.ndim != nd:
        raise TypeError(
            f"conv_transpose: expected lhs and rhs of the same rank, at least 2, got "
            f"shapes {la.shape} and {ra.shape}."
        )
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_LAYOUTS:
            raise ValueError(
                f"conv_transpose: expected dimension_numbers for operands of rank {nd} "
                f"(defaults exist for ranks 2 to 5)."
            )
        dimension_numbers = _TRANSPOSE_LAYOUTS[nd]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    ns = nd - 2
    strides_t = _as_ints("conv_transpose", "strides", strides, ns)
    rdil = _as_ints("conv_transpose", "rhs_dilation", rhs_dilation, ns)
    pads: Any
    if isinstance(padding, str):
        key = padding.upper()
        if key not in ("SAME", "VALID"):
            raise ValueError(
                f"conv_transpose: expected padding 'SAME', 'VALID' or (low, high) pairs, "
                f"got {padding!r}."
            )
        ks = [_dilate_dim(ra.shape[i], d) for i, d in zip(dn.rhs_spec[2:], rdil)]
        pads = [conv_transpose_pads(k, s, key) for k, s in zip(ks, strides_t)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(nd))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * ns,
        pads,
        lhs_dilation=strides_t,
        rhs_dilation=rdil,
        dimension_numbers=dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


__all__ = [
    "ConvDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_with_general_padding",
    "padtype_to_pads",
]
