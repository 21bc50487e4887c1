"""The control array shared by functrace's workers and its region kernels
(``native.py``), and the fields of a product's job in it: one layout for the kernel's
two implementations (``native_llvm.py``, ``native_numba.py``)."""

NEXT, DONE, STATE, STOP, TAKEN, YIELD, PYGEN, PYDONE, JOB = range(0, 72, 8)
"""Offsets in the control array: a cache line (8 words) per counter (``TAKEN``: blocks
the workers computed, for tests and diagnostics; ``YIELD``: the address of the C
library's ``sched_yield``, 0 where there is none; ``PYGEN``/``PYDONE``: the last
region of Python chunks published, and the last one finished), then the job."""
IDX_BITS = 16
IDX = (1 << IDX_BITS) - 1  # NEXT: the block count, then the next block's index
MAX_BLOCKS = 64
SPINS = {True: 4000, False: 20000}
"""Rounds a worker waits for a region after its last block before it sleeps: about 1
ms of ``sched_yield`` calls (True) or of pause instructions (False) here."""
# Job fields, after JOB: the gemm function, whether it takes 64-bit integers, the item
# size, split by rows, m, n, k, a, lda, b, ldb, c, a transposed, b transposed, then the
# block bounds.
(_ADDR, _WIDE, _SIZE, _ROWS, _M, _N, _K, _A, _LDA, _B, _LDB, _C, _TA, _TB, _BOUNDS) = range(
    JOB, JOB + 15
)
CTL_SIZE = _BOUNDS + MAX_BLOCKS + 1
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # CBLAS's enum values
