"""``functrace.experimental.sparse``: JAX's ``jax.experimental.sparse`` BCOO arrays.

A :class:`BCOO` stores the nonzero entries of an array as ``data`` (one value, or one
dense block, per entry) and ``indices`` (one row of sparse coordinates per entry); it
is a pytree, so ``jit``, ``grad`` and ``vmap`` take functions of it. Build one with
``BCOO((data, indices), shape=...)``, :func:`bcoo_fromdense` (``BCOO.fromdense``),
:func:`eye`, :func:`empty` or :func:`random_bcoo`; ``.todense()`` gives the dense array
back. Products with dense arrays (``M @ x``, ``x @ M``, :func:`bcoo_dot_general`) and
with BCOO arrays (``M @ N``, a BCOO), :func:`bcoo_dot_general_sampled`, ``.T``,
``.sum(axis)``, products with dense arrays or scalars (``M * 2``,
:func:`bcoo_multiply_dense`), ``-M``, :func:`bcoo_sum_duplicates`,
:func:`bcoo_sort_indices`, the shape operations (:func:`bcoo_reshape` and
``M.reshape``, :func:`bcoo_squeeze`, :func:`bcoo_broadcast_in_dim`,
:func:`bcoo_concatenate`, :func:`bcoo_slice`, :func:`bcoo_dynamic_slice`,
:func:`bcoo_rev`, :func:`bcoo_update_layout`) and indexing with integers and slices
(``M[1]``, ``M[:, 1:3]``) work as JAX's, and :func:`sparsify` runs a function written
for dense arrays on BCOO arguments. The compressed-row :class:`BCSR` format
(:func:`bcsr_fromdense`, :func:`bcsr_todense`, :func:`bcsr_dot_general`,
:func:`bcsr_extract`, ``to_bcoo``/``from_bcoo``) and JAX's older :class:`COO`,
:class:`CSR` and :class:`CSC` matrices (``coo_*``/``csr_*`` conversions and products)
are provided too, without batch dimensions.

Every operation is written with functrace's differentiable gathers, scatter-adds and
products, so derivatives, batching and compilation come from theirs: the gradient of
``(BCOO((d, idx), shape=s) @ x).sum()`` in ``d`` is JAX's. What differs from JAX:
there are no batch dimensions (``n_batch`` is 0; ``vmap`` maps the data of a BCOO
built inside the function), :func:`eye` and :func:`empty` build BCOO arrays only, and
``grad`` of a function of a BCOO argument differentiates its ``data`` through
:func:`grad` / :func:`value_and_grad` / :func:`jacfwd` / :func:`jacrev` of this module,
as JAX's (a Jacobian of a non-scalar output is the dense array of its data's, where
JAX returns a BCOO with batch dimensions).

>>> import numpy as np
>>> M = BCOO.fromdense(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
>>> M
BCOO(float64[2, 3], nse=3)
>>> M @ np.ones(3)
Array([1., 5.])
"""

from __future__ import annotations

from functrace.experimental.sparse._bcoo import (
    BCOO,
    JAXSparse,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_reduce_sum,
    bcoo_sort_indices,
    bcoo_sum_duplicates,
    bcoo_todense,
    bcoo_transpose,
    empty,
    eye,
    todense,
)
from functrace.experimental.sparse._bcsr import (
    BCSR,
    bcsr_dot_general,
    bcsr_extract,
    bcsr_fromdense,
    bcsr_todense,
)
from functrace.experimental.sparse._legacy import (
    COO,
    CSC,
    CSR,
    coo_fromdense,
    coo_matmat,
    coo_matvec,
    coo_todense,
    csr_fromdense,
    csr_matmat,
    csr_matvec,
    csr_todense,
)
from functrace.experimental.sparse._products import (
    bcoo_dot_general,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
)
from functrace.experimental.sparse._shapes import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dynamic_slice,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
    bcoo_update_layout,
)
from functrace.experimental.sparse._spdot import bcoo_dot_general_sampled, random_bcoo
from functrace.experimental.sparse._transform import (
    grad,
    jacfwd,
    jacobian,
    jacrev,
    sparsify,
    value_and_grad,
)

__all__ = [
    "BCOO",
    "BCSR",
    "COO",
    "CSC",
    "CSR",
    "JAXSparse",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_dynamic_slice",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
    "bcsr_dot_general",
    "bcsr_extract",
    "bcsr_fromdense",
    "bcsr_todense",
    "coo_fromdense",
    "coo_matmat",
    "coo_matvec",
    "coo_todense",
    "csr_fromdense",
    "csr_matmat",
    "csr_matvec",
    "csr_todense",
    "empty",
    "eye",
    "grad",
    "jacfwd",
    "jacobian",
    "jacrev",
    "random_bcoo",
    "sparsify",
    "todense",
    "value_and_grad",
]
