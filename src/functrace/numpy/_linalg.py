"""Products of functrace.numpy: ``matmul``, ``dot``, ``vdot``, ``outer``, ``inner``,
``tensordot`` and ``einsum``.

On plain NumPy inputs each function calls NumPy. On tracers the operands are
promoted (NumPy 2 rules) and cast explicitly, then contracted by one
``dot_general`` per pair of operands (batch axes, contracting axes), with
``transpose``/``broadcast_in_dim``/``reduce_sum`` around it where needed.

Decisions:

* Boolean products are computed in int64 and compared with 0 (NumPy gives bool:
  "any a and b").
* ``matmul`` broadcasts batch axes explicitly only when both operands have them;
  a 1-d or 2-d operand is contracted without copies.
* ``einsum`` on tracers handles the subscripts string and the interleaved
  ``(a, [0, 1], b, [1, 2], [0, 2])`` form, explicit (``->``) and implicit outputs,
  ``...``, contractions over any number of operands (left to right) and size-1
  broadcasting. A label repeated within one operand (``'ii->'``, ``'ii->i'``,
  ``'iij->ij'``) first takes that operand's diagonal (a strided ``slice``, see
  ``diagonal``). ``optimize=`` is accepted and checked but the contraction order is
  always left to right.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from functrace import core, dtypes
from functrace.lax import elementwise as lx
from functrace.lax import reductions as lr
from functrace.lax import shapes as ls
from functrace.lax.extras import conj
from functrace.numpy._core import asarray_or_tracer, broadcast_to_shape, cast, normalize_axis
from functrace.numpy._dispatch import numpy_path
from functrace.numpy._math import multiply
from functrace.numpy._twodim import diagonal

_INT64 = np.dtype(np.int64)
_PY_SCALARS = (bool, int, float, complex)


def _promote(fname: str, *xs: Any, dtype: Any = None) -> tuple[list[Any], np.dtype, bool]:
    """Operands cast to their common dtype; bools become int64 (``is_bool`` says so)."""
    # Python scalars are strong here: NumPy's products convert them to arrays first.
    given = [asarray_or_tracer(x, fname) for x in xs]
    xs = tuple(_strong(*given))
    avals = [core.get_aval(x) for x in xs]
    if dtype is not None:
        dt, weak = np.dtype(dtype), False
    else:
        if dtypes.promotion.maybe_strict:  # config.numpy_dtype_promotion="strict"
            dtypes.check_operand_promotion(fname, given)  # (Python scalars weak, as in JAX)
        dt, weak = dtypes.promote(*[(a.dtype, a.weak_type) for a in avals])
    is_bool = dt.kind == "b"
    work = _INT64 if is_bool else dt
    if work.kind not in "iufc":
        raise TypeError(
            f"{fname}: expected numeric or boolean operands, got "
            f"{', '.join(a.dtype.name for a in avals)}. Cast with .astype first."
        )
    return [cast(x, work, weak) for x in xs], dt, is_bool


def _strong(*xs: Any) -> list[Any]:
    return [np.asarray(x) if type(x) in _PY_SCALARS else x for x in xs]


def _finish(out: Any, is_bool: bool) -> Any:
    return lx.ne(out, lx.zeros_like(out)) if is_bool else out


def _dot(
    a: Any,
    b: Any,
    contract: tuple[Sequence[int], Sequence[int]],
    batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
) -> Any:
    return ls.dot_general(a, b, (tuple(map(tuple, contract)), tuple(map(tuple, batch))))


def _shapes(*xs: Any) -> list[tuple[int, ...]]:
    return [core.get_aval(x).shape for x in xs]


# ---------------------------------------------------------------------------
# matmul, dot, vdot, outer, inner, tensordot
# ---------------------------------------------------------------------------


def _matmul(a: Any, b: Any, /) -> Any:
    """Matrix product with NumPy's rules: batch axes broadcast; a 1-d operand is a
    vector (its axis is contracted and does not appear in the result).

    >>> import functrace.numpy as fnp
    >>> fnp.matmul(fnp.ones((5, 2, 3)), fnp.ones((3, 4))).shape
    (5, 2, 4)
    """
    (a, b), _, is_bool = _promote("matmul", a, b)
    sa, sb = _shapes(a, b)
    if not sa or not sb:
        raise ValueError(
            f"matmul: expected operands with at least one axis, got shapes {sa} "
            f"and {sb}. Use multiply (*) for scalars."
        )
    ca, cb = len(sa) - 1, builtins.max(len(sb) - 2, 0)
    if sa[ca] != sb[cb]:
        raise TypeError(
            f"matmul: expected the last axis of a to match the "
            f"{'second-to-last' if len(sb) > 1 else 'only'} axis of b, got shapes "
            f"{sa} and {sb}. Transpose or reshape an operand."
        )
    batch_a, batch_b = sa[:-2], sb[:-2]
    if not batch_a:
        out = _dot(a, b, ((ca,), (cb,)))
        if len(sa) == 2 and batch_b:  # (n, batch_b..., m) -> (batch_b..., n, m)
            nb = len(batch_b)
            out = ls.transpose(out, (*range(1, nb + 1), 0, nb + 1))
    elif not batch_b:
        out = _dot(a, b, ((ca,), (cb,)))
    else:
        try:
            batch = np.broadcast_shapes(batch_a, batch_b)
        except ValueError:
            raise ValueError(
                f"matmul: expected batch axes that broadcast together, got shapes "
                f"{sa} and {sb}. Make the leading axes equal or 1."
            ) from None
        k = len(batch)
        a = broadcast_to_shape(a, batch + sa[-2:])
        b = broadcast_to_shape(b, batch + sb[-2:])
        out = _dot(a, b, ((k + 1,), (k,)), (range(k), range(k)))
    return _finish(out, is_bool)


def _dot_np(a: Any, b: Any, out: Any = None) -> Any:
    """NumPy's ``dot``: a sum over the last axis of ``a`` and the second-to-last of ``b``
    (its only axis if 1-d); a product if either is 0-d.

    >>> import functrace.numpy as fnp
    >>> fnp.dot(fnp.ones((2, 3)), fnp.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    if out is not None:
        raise TypeError(
            "dot: expected out=None, got an output array. functrace.numpy never "
            "writes in place: use the returned array."
        )
    if (
        not core.get_aval(asarray_or_tracer(a)).shape
        or not core.get_aval(asarray_or_tracer(b)).shape
    ):
        return multiply(*_strong(a, b))
    (a, b), _, is_bool = _promote("dot", a, b)
    sa, sb = _shapes(a, b)
    ca, cb = len(sa) - 1, builtins.max(len(sb) - 2, 0)
    if sa[ca] != sb[cb]:
        raise TypeError(
            f"dot: expected the last axis of a to match the "
            f"{'second-to-last' if len(sb) > 1 else 'only'} axis of b, got shapes "
            f"{sa} and {sb}. Transpose or reshape an operand."
        )
    return _finish(_dot(a, b, ((ca,), (cb,))), is_bool)


@numpy_path(
    lambda a, b, /, *, precision=None, preferred_element_type=None: _with_options(
        "vdot", np.vdot, a, b, precision, preferred_element_type
    ),
    promotes=True,
)
def vdot(a: Any, b: Any, /, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays (the first one conjugated).

    >>> import functrace.numpy as fnp
    >>> fnp.vdot([[1, 2], [3, 4]], [[1, 1], [1, 1]])
    np.int64(10)
    """
    if precision is not None or preferred_element_type is not None:
        return _with_options("vdot", vdot, a, b, precision, preferred_element_type)
    (a, b), dt, is_bool = _promote("vdot", a, b)
    if dt.kind == "c":
        a = conj(a)
    sa, sb = _shapes(a, b)
    na, nb = int(np.prod(sa, dtype=np.int64)), int(np.prod(sb, dtype=np.int64))
    if na != nb:
        raise ValueError(
            f"vdot: expected operands with the same number of elements, got "
            f"shapes {sa} and {sb}. Reshape them to one size."
        )
    return _finish(_dot(ls.reshape(a, (na,)), ls.reshape(b, (nb,)), ((0,), (0,))), is_bool)


@numpy_path(lambda a, b, out=None: np.outer(a, b, out), promote_args=(0, 1))
def outer(a: Any, b: Any, out: Any = None) -> Any:
    """``a.ravel()[:, None] * b.ravel()[None, :]``.

    >>> import functrace.numpy as fnp
    >>> fnp.outer([1, 2], [1, 10, 100])
    array([[  1,  10, 100],
           [  2,  20, 200]])
    """
    a, b = (asarray_or_tracer(x, "outer") for x in _strong(a, b))
    na, nb = core.get_aval(a).size, core.get_aval(b).size
    return multiply(ls.reshape(a, (na, 1)), ls.reshape(b, (1, nb)))


@numpy_path(
    lambda a, b, /, *, precision=None, preferred_element_type=None: _with_options(
        "inner", np.inner, a, b, precision, preferred_element_type
    ),
    promotes=True,
)
def inner(a: Any, b: Any, /, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Sum over the last axes of both (a product if either is 0-d).

    >>> import functrace.numpy as fnp
    >>> fnp.inner(fnp.ones((2, 3)), fnp.ones((4, 3))).shape
    (2, 4)
    """
    if precision is not None or preferred_element_type is not None:
        return _with_options("inner", inner, a, b, precision, preferred_element_type)
    if (
        not core.get_aval(asarray_or_tracer(a)).shape
        or not core.get_aval(asarray_or_tracer(b)).shape
    ):
        return multiply(*_strong(a, b))
    (a, b), _, is_bool = _promote("inner", a, b)
    sa, sb = _shapes(a, b)
    if sa[-1] != sb[-1]:
        raise ValueError(
            f"inner: expected equal last axes, got shapes {sa} and {sb}. "
            f"Transpose or reshape an operand."
        )
    return _finish(_dot(a, b, ((len(sa) - 1,), (len(sb) - 1,))), is_bool)


def _tensordot_axes(axes: Any, na: int, nb: int) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > builtins.min(na, nb):
            raise ValueError(
                f"tensordot: expected axes in [0, {builtins.min(na, nb)}] for "
                f"operands of {na} and {nb} dimensions, got {n}. Contract at most "
                f"the smaller number of axes."
            )
        return list(range(na - n, na)), list(range(n))
    try:
        xa, xb = axes
    except (TypeError, ValueError):
        raise TypeError(
            f"tensordot: expected an int or a pair of axis sequences, got "
            f"{axes!r}. Pass e.g. ([1], [0])."
        ) from None
    xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
    xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
    if len(xa) != len(xb):
        raise ValueError(
            f"tensordot: expected as many axes of a as of b, got {xa} and {xb}. "
            f"Pair the contracted axes one to one."
        )
    return (
        [normalize_axis("tensordot", x, na) for x in xa],
        [normalize_axis("tensordot", x, nb) for x in xb],
    )


@numpy_path(
    lambda a, b, axes=2, *, precision=None, preferred_element_type=None: _with_options(
        "tensordot", np.tensordot, a, b, precision, preferred_element_type, axes
    ),
    promotes=True,
)
def tensordot(
    a: Any, b: Any, axes: Any = 2, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Contract the last ``axes`` axes of ``a`` with the first of ``b`` (or the listed pairs).

    >>> import functrace.numpy as fnp
    >>> fnp.tensordot(fnp.ones((2, 3, 4)), fnp.ones((3, 4, 5)), axes=2).shape
    (2, 5)
    """
    if precision is not None or preferred_element_type is not None:
        return _with_options("tensordot", tensordot, a, b, precision, preferred_element_type, axes)
    (a, b), _, is_bool = _promote("tensordot", a, b)
    sa, sb = _shapes(a, b)
    xa, xb = _tensordot_axes(axes, len(sa), len(sb))
    for i, j in zip(xa, xb):
        if sa[i] != sb[j]:
            raise ValueError(
                f"tensordot: expected equal sizes of paired axes, got axis {i} of "
                f"shape {sa} and axis {j} of shape {sb}. Pair axes of one size."
            )
    if len(set(xa)) != len(xa) or len(set(xb)) != len(xb):
        raise ValueError(f"tensordot: expected distinct axes, got {axes}. Name each axis once.")
    return _finish(_dot(a, b, (xa, xb)), is_bool)


# ---------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------

Label = str | int  # a letter, or an int for an ellipsis axis (-1 = the last one)


def _parse_term(subscripts: str, term: str, ndim: int | None) -> list[Label]:
    """Labels of one term; ``...`` expands to ints -k..-1 (right-aligned broadcast axes)."""
    head, dots, tail = term.partition("...")
    if "." in head or "." in tail:
        raise ValueError(
            f"einsum: expected '...' at most once per term and no other '.', got "
            f"{term!r} in {subscripts!r}."
        )
    for c in head + tail:
        if not c.isalpha():
            raise ValueError(
                f"einsum: expected letters and '...' in subscripts, got {c!r} in "
                f"{subscripts!r}. Use one letter per axis."
            )
    if ndim is None:  # the output term: its ellipsis is filled in by the caller
        return [*head, *(["..."] if dots else []), *tail]
    n_letters = len(head) + len(tail)
    if (dots and ndim < n_letters) or (not dots and ndim != n_letters):
        raise ValueError(
            f"einsum: expected term {term!r} to label all {ndim} axes of its "
            f"operand, got {n_letters} letters{' and ...' if dots else ''}. Give one "
            f"letter per axis, or '...' for the leading ones."
        )
    return [*head, *range(-(ndim - n_letters), 0), *tail]


def _parse_einsum(subscripts: str, ndims: list[int]) -> tuple[list[list[Label]], list[Label]]:
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    if "->" in rhs or ("-" in lhs or ">" in lhs):
        raise ValueError(f"einsum: expected at most one '->', got {subscripts!r}.")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(
            f"einsum: expected one term per operand ({len(ndims)}), got "
            f"{len(terms)} terms in {subscripts!r}. Separate terms with ','."
        )
    ins = [_parse_term(subscripts, t, n) for t, n in zip(terms, ndims)]
    n_ell = builtins.max(
        [-builtins.min([lb for lb in t if isinstance(lb, int)], default=0) for t in ins], default=0
    )
    ell = list(range(-n_ell, 0))
    letters = [lb for t in ins for lb in t if isinstance(lb, str)]
    if arrow:
        out_raw = _parse_term(subscripts, rhs, None)
        out: list[Label] = []
        for lb in out_raw:
            out.extend(ell if lb == "..." else [lb])
        for lb in out:
            if isinstance(lb, str) and lb not in letters:
                raise ValueError(
                    f"einsum: expected output labels that appear in the inputs, "
                    f"got {lb!r} in {subscripts!r}."
                )
        if len(set(out)) != len(out):
            raise ValueError(
                f"einsum: expected each output label once, got {rhs!r} in {subscripts!r}."
            )
        if n_ell and "..." not in out_raw:
            raise ValueError(
                f"einsum: expected '...' in the output when the inputs' '...' "
                f"covers axes, got {subscripts!r}. NumPy requires it too; name "
                f"the axes with letters to sum over them."
            )
    else:
        out = ell + sorted(lb for lb in set(letters) if letters.count(lb) == 1)
    return ins, out


def _sublist_letters(sub: Any, what: str) -> str:
    """One term of the interleaved form: ints 0-25 are 'A'-'Z', 26-51 'a'-'z'."""
    try:
        items = list(sub)
    except TypeError:
        raise TypeError(
            f"einsum: expected a sublist (a list of ints and Ellipsis) for {what}, got "
            f"{sub!r}. The interleaved form is einsum(a, [0, 1], b, [1, 2], [0, 2])."
        ) from None
    out = []
    for lb in items:
        if lb is Ellipsis:
            out.append("...")
        elif isinstance(lb, (int, np.integer)) and not isinstance(lb, bool) and 0 <= lb < 52:
            out.append(chr(ord("A") + lb) if lb < 26 else chr(ord("a") + lb - 26))
        else:
            raise ValueError(
                f"einsum: expected sublist entries that are ints in [0, 52) or Ellipsis, "
                f"got {lb!r} in {what} {sub!r}."
            )
    return "".join(out)


def _interleaved(first: Any, rest: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(a, sub_a, b, sub_b, ..., [sub_out])`` -> (subscripts string, operands)."""
    args = [first, *rest]
    operands, subs = args[0:-1:2] if len(args) % 2 else args[0::2], args[1::2]
    terms = [_sublist_letters(sub, f"operand {i}") for i, sub in enumerate(subs)]
    spec = ",".join(terms)
    if len(args) % 2:
        spec += "->" + _sublist_letters(args[-1], "the output")
    return spec, list(operands)


def _take_diagonals(
    subscripts: str, x: Any, labels: list[Label], k: int
) -> tuple[Any, list[Label]]:
    """Collapse each label repeated within operand ``k`` onto its diagonal, which
    becomes the operand's last axis (``'ii'`` keeps the ``i == j`` elements)."""
    while True:
        repeated = next((lb for lb in labels if labels.count(lb) > 1), None)
        if repeated is None:
            return x, labels
        p = labels.index(repeated)
        q = labels.index(repeated, p + 1)
        shape = core.get_aval(x).shape
        if shape[p] != shape[q]:
            raise ValueError(
                f"einsum: expected equal sizes for label {repeated!r} repeated in operand "
                f"{k}, got {shape[p]} and {shape[q]} (shape {shape}) in {subscripts!r}."
            )
        x = diagonal(x, 0, p, q)
        labels = [lb for i, lb in enumerate(labels) if i not in (p, q)] + [repeated]


def _label_sizes(
    subscripts: str, ins: list[list[Label]], shapes: list[tuple[int, ...]]
) -> dict[Label, int]:
    sizes: dict[Label, int] = {}
    for labels, shape in zip(ins, shapes):
        for lb, d in zip(labels, shape):
            prev = sizes.get(lb)
            if prev is None or prev == 1:
                sizes[lb] = d
            elif d not in (1, prev):
                name = "..." if isinstance(lb, int) else repr(lb)
                raise ValueError(
                    f"einsum: expected one size per label, got sizes {prev} and "
                    f"{d} for {name} in {subscripts!r} with operand shapes "
                    f"{shapes}. Make the axes agree (or size 1 to broadcast)."
                )
    return sizes


def _check_optimize(optimize: Any) -> None:
    ok = (
        optimize in (False, True, "greedy", "optimal")
        if isinstance(optimize, (bool, str))
        else (
            isinstance(optimize, (list, tuple))
            and len(optimize) > 0
            and optimize[0] == "einsum_path"
        )
    )
    if not ok:
        raise TypeError(
            f"einsum: expected optimize False, True, 'greedy', 'optimal' or an "
            f"['einsum_path', ...] list, got {optimize!r}."
        )


def _einsum(
    subscripts: Any,
    *operands: Any,
    out: Any = None,
    dtype: Any = None,
    optimize: Any = False,
    **kwargs: Any,
) -> Any:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is ``a @ b``.

    Labels shared by operands and absent from the output are summed over; the
    output defaults to the labels seen once, in alphabetical order (after ``...``).

    >>> import functrace.numpy as fnp
    >>> fnp.einsum('bi,bi->b', fnp.ones((2, 3)), fnp.ones((2, 3)))
    Array([3., 3.])
    """
    if out is not None or kwargs:
        raise TypeError(
            f"einsum: expected no out= or {sorted(kwargs)} on traced arrays, got "
            f"them. Use the returned array; only dtype= and optimize= are accepted."
        )
    _check_optimize(optimize)
    args = list(operands)
    if not isinstance(subscripts, str):
        subscripts, args = _interleaved(subscripts, operands)
    if not args:
        raise ValueError(f"einsum: expected at least one operand, got none for {subscripts!r}.")
    xs, dt, is_bool = _promote("einsum", *args, dtype=dtype)
    ins, out_labels = _parse_einsum(subscripts, [len(s) for s in _shapes(*xs)])
    for k in range(len(xs)):
        xs[k], ins[k] = _take_diagonals(subscripts, xs[k], ins[k], k)
    shapes = _shapes(*xs)
    sizes = _label_sizes(subscripts, ins, shapes)
    # Size-1 axes that broadcast against a larger size: drop them (the label is then
    # simply absent from that operand, which is what broadcasting means).
    ops: list[tuple[Any, list[Label]]] = []
    for x, labels, shape in zip(xs, ins, shapes):
        keep = [
            i for i, (lb, d) in enumerate(zip(labels, shape)) if not (d == 1 and sizes[lb] != 1)
        ]
        if len(keep) != len(labels):
            x = ls.reshape(x, tuple(shape[i] for i in keep))
            labels = [labels[i] for i in keep]
        ops.append((x, labels))
    result, labels = _contract(ops, out_labels)
    missing = [lb for lb in out_labels if lb not in labels]
    if missing:  # only size-1 labels can go missing; put them back
        result = ls.reshape(result, core.get_aval(result).shape + (1,) * len(missing))
        labels = labels + missing
    result = ls.transpose(result, tuple(labels.index(lb) for lb in out_labels))
    return _finish(result, is_bool)


def _contract(
    ops: list[tuple[Any, list[Label]]], out_labels: list[Label]
) -> tuple[Any, list[Label]]:
    """Contract operands left to right, summing each label once nothing else needs it."""

    def needed_after(i: int) -> set[Label]:
        s = set(out_labels)
        for _, lbs in ops[i + 1 :]:
            s.update(lbs)
        return s

    # Labels that appear in only one operand and not in the output: sum them first.
    reduced = []
    for i, (x, labels) in enumerate(ops):
        others = set(out_labels)
        for j, (_, lbs) in enumerate(ops):
            if j != i:
                others.update(lbs)
        axes = tuple(k for k, lb in enumerate(labels) if lb not in others)
        if axes:
            x = lr.reduce_sum(x, axes)
            labels = [lb for lb in labels if lb in others]
        reduced.append((x, labels))
    acc, acc_l = reduced[0]
    for i in range(1, len(reduced)):
        x, x_l = reduced[i]
        later = needed_after(i)
        common = [lb for lb in acc_l if lb in x_l]
        batch = [lb for lb in common if lb in later]
        contract = [lb for lb in common if lb not in later]
        acc = _dot(
            acc,
            x,
            ([acc_l.index(lb) for lb in contract], [x_l.index(lb) for lb in contract]),
            ([acc_l.index(lb) for lb in batch], [x_l.index(lb) for lb in batch]),
        )
        acc_l = (
            batch
            + [lb for lb in acc_l if lb not in common]
            + [lb for lb in x_l if lb not in common]
        )
    return acc, acc_l


__all__ = ["dot", "einsum", "inner", "matmul", "outer", "tensordot", "vdot"]


# ---------------------------------------------------------------------------
# precision= and preferred_element_type= (JAX's keywords of the matrix products)
# ---------------------------------------------------------------------------


def _with_pet(fname: str, operands: Sequence[Any], pet: Any) -> tuple[list[Any], Any]:
    """Operands cast to ``preferred_element_type`` where that loses nothing (the product
    is then computed in it), and the dtype the result still needs casting to."""
    target = np.dtype(pet)
    if target.kind not in "biufc":
        raise TypeError(f"{fname}: expected a numeric preferred_element_type, got {target.name}.")
    out = []
    post = None
    for x in operands:
        dt = core.get_aval(asarray_or_tracer(x)).dtype
        if np.promote_types(dt, target) == target:
            out.append(cast(asarray_or_tracer(x), target))
        else:
            out.append(x)
            post = target
    return out, post


def _finish_pet(result: Any, post: Any) -> Any:
    if post is None:
        return result
    r = asarray_or_tracer(result)
    return r.astype(post) if isinstance(r, np.ndarray) else cast(r, post)


def _with_options(
    fname: str, product: Any, a: Any, b: Any, precision: Any, pet: Any, *rest: Any
) -> Any:
    """``product(a, b, *rest)`` with JAX's ``precision`` (checked, then ignored: see
    ``lax.Precision``) and ``preferred_element_type`` (the result's dtype)."""
    ls.check_precision(fname, precision)
    if pet is None:
        return product(a, b, *rest)
    (a, b), post = _with_pet(fname, (a, b), pet)
    return _finish_pet(product(a, b, *rest), post)


def _np_matmul(
    a: Any, b: Any, /, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    ls.check_precision("matmul", precision)
    if preferred_element_type is None:
        try:
            return np.matmul(a, b)
        except ValueError:  # a shape error: reported as for traced operands
            return _matmul(a, b)
    (a, b), post = _with_pet("matmul", (a, b), preferred_element_type)
    return _finish_pet(_np_matmul(a, b), post)


@numpy_path(_np_matmul, promotes=True)
def matmul(a: Any, b: Any, /, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Matrix product with NumPy's rules: batch axes broadcast; a 1-d operand is a
    vector (its axis is contracted and does not appear in the result).

    ``preferred_element_type`` sets the result dtype; ``precision`` is accepted and
    ignored (CPU products use the operands' precision; see ``lax.Precision``).

    >>> import functrace.numpy as fnp
    >>> fnp.matmul(fnp.ones((5, 2, 3)), fnp.ones((3, 4))).shape
    (5, 2, 4)
    """
    ls.check_precision("matmul", precision)
    if preferred_element_type is None:
        return _matmul(a, b)
    (a, b), post = _with_pet("matmul", (a, b), preferred_element_type)
    return _finish_pet(_matmul(a, b), post)


def _np_dot(
    a: Any, b: Any, out: Any = None, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    ls.check_precision("dot", precision)
    if preferred_element_type is None:
        try:
            return np.dot(a, b, out)
        except ValueError:  # a shape error: reported as for traced operands
            if out is not None:
                raise
            return _dot_np(a, b, out)
    (a, b), post = _with_pet("dot", (a, b), preferred_element_type)
    return _finish_pet(_np_dot(a, b, out), post)


@numpy_path(_np_dot, promotes=True)
def dot(
    a: Any, b: Any, out: Any = None, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """NumPy's ``dot``: a sum over the last axis of ``a`` and the second-to-last of ``b``
    (its only axis if 1-d); a product if either is 0-d.

    ``preferred_element_type`` sets the result dtype; ``precision`` is accepted and
    ignored (see ``lax.Precision``).

    >>> import functrace.numpy as fnp
    >>> fnp.dot(fnp.ones((2, 3)), fnp.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    ls.check_precision("dot", precision)
    if preferred_element_type is None:
        return _dot_np(a, b, out)
    (a, b), post = _with_pet("dot", (a, b), preferred_element_type)
    return _finish_pet(_dot_np(a, b, out), post)


def _einsum_pet(subscripts: Any, operands: Sequence[Any], pet: Any) -> tuple[list[Any], Any]:
    """``_with_pet`` for einsum's operands (the interleaved form only casts the result)."""
    if isinstance(subscripts, str):
        return _with_pet("einsum", operands, pet)
    return list(operands), np.dtype(pet)


def _np_einsum(
    subscripts: Any,
    *operands: Any,
    out: Any = None,
    dtype: Any = None,
    optimize: Any = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    **kwargs: Any,
) -> Any:
    ls.check_precision("einsum", precision)
    if preferred_element_type is None:
        return np.einsum(subscripts, *operands, out=out, dtype=dtype, optimize=optimize, **kwargs)
    ops, post = _einsum_pet(subscripts, operands, preferred_element_type)
    res = np.einsum(subscripts, *ops, out=out, dtype=dtype, optimize=optimize, **kwargs)
    return _finish_pet(res, post)


@numpy_path(_np_einsum, promotes=True)
def einsum(
    subscripts: Any,
    *operands: Any,
    out: Any = None,
    dtype: Any = None,
    optimize: Any = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    **kwargs: Any,
) -> Any:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is ``a @ b``.

    Labels shared by operands and absent from the output are summed over; the
    output defaults to the labels seen once, in alphabetical order (after ``...``).
    ``preferred_element_type`` sets the result dtype; ``precision`` is accepted and
    ignored (see ``lax.Precision``).

    >>> import functrace.numpy as fnp
    >>> fnp.einsum('bi,bi->b', fnp.ones((2, 3)), fnp.ones((2, 3)))
    Array([3., 3.])
    """
    ls.check_precision("einsum", precision)
    if preferred_element_type is None:
        return _einsum(subscripts, *operands, out=out, dtype=dtype, optimize=optimize, **kwargs)
    ops, post = _einsum_pet(subscripts, operands, preferred_element_type)
    res = _einsum(subscripts, *ops, out=out, dtype=dtype, optimize=optimize, **kwargs)
    return _finish_pet(res, post)
