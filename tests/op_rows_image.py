"""Op-table rows: functrace.image's ``resize`` and ``scale_and_translate``, against a
plain NumPy evaluation written here output pixel by output pixel (Python floats, no
functrace).

Both are weights matrices contracted with the image, so the rows check that the
contractions, the gathers of ``nearest`` and (for ``scale_and_translate`` with drawn
``scale`` and ``translation``) the weights' own elementwise operations differentiate,
batch and jit. Output sizes follow the drawn input's, so the rows also run on empty
and 0-d images. Values against JAX: tests/test_image.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from functrace.image import resize, scale_and_translate
from op_db import Arg, F, OpInfo

_TINY_SUM = 1000.0 * float(np.finfo(np.float32).eps)


def _triangle(x: float) -> float:
    return max(0.0, 1.0 - x)


def _keys_cubic(x: float) -> float:
    if x >= 2.0:
        return 0.0
    if x >= 1.0:
        return -0.5 * x**3 + 2.5 * x**2 - 4.0 * x + 2.0
    return 1.5 * x**3 - 2.5 * x**2 + 1.0


def _lanczos3(x: float) -> float:
    if x > 3.0:
        return 0.0
    if x <= 1e-3:
        return 1.0
    return 3.0 * math.sin(math.pi * x) * math.sin(math.pi * x / 3.0) / (math.pi * x) ** 2


def _matrix(
    m: int, n: int, scale: float, shift: float, kernel: Callable[[float], float], aa: bool
) -> np.ndarray:
    """The (m, n) weights: column j holds the normalised kernel around the input point
    output pixel j's centre maps back to, or zeros when that point is outside."""
    stretch = max(1.0 / scale, 1.0) if aa else 1.0
    w = np.zeros((m, n))
    for j in range(n):
        p = (j + 0.5 - shift) / scale - 0.5
        col = [kernel(abs(p - i) / stretch) for i in range(m)]
        total = sum(col)
        if abs(total) > _TINY_SUM and -0.5 <= p <= m - 0.5:
            w[:, j] = np.array(col) / total
    return w


def _apply(x: Any, mats: dict[int, np.ndarray]) -> Any:
    x = np.asarray(x)
    out = x.astype(np.float64)
    for d, w in mats.items():
        out = np.moveaxis(np.tensordot(out, w, axes=([d], [0])), -1, d)
    return out.astype(x.dtype)


def _sizes(x: Any, rule: Callable[[int, int], int]) -> tuple[int, ...]:
    return tuple(rule(d, s) for d, s in enumerate(np.shape(x)))


def _resize_ref(rule: Callable[[int, int], int], kernel: Callable[[float], float]) -> Any:
    def ref(x: Any) -> Any:
        shape = np.shape(x)
        out = _sizes(x, rule)
        mats = {
            d: _matrix(m, n, n / m, 0.0, kernel, True)
            for d, (m, n) in enumerate(zip(shape, out))
            if m != n
        }
        return _apply(x, mats)

    return ref


def _nearest_ref(rule: Callable[[int, int], int]) -> Any:
    def ref(x: Any) -> Any:
        x = np.asarray(x)
        for d, (m, n) in enumerate(zip(x.shape, _sizes(x, rule))):
            if m != n:
                x = np.take(x, [int((j + 0.5) * m / n) for j in range(n)], axis=d)
        return x

    return ref


def _resize_row(name: str, method: str, rule: Callable[[int, int], int], ref: Any) -> OpInfo:
    return OpInfo(
        name,
        lambda x: resize(x, _sizes(x, rule), method),
        ref,
        (F,),
        ("dot_general",) if method != "nearest" else ("gather",),
        rtol=1e-12,
        atol=1e-12,
    )


def _down(d: int, s: int) -> int:
    return (s + 1) // 2  # 1, 1, 2, 2 for 1..4 (0 stays 0)


def _up(d: int, s: int) -> int:
    return 2 * s


def _up_then_down(d: int, s: int) -> int:
    return 3 * s // 2 if d == 0 else (s + 1) // 2


def _down_then_up(d: int, s: int) -> int:
    return (s + 1) // 2 if d == 0 else (3 * s + 1) // 2


# scale_and_translate of a signal of 6 to 5 samples, in the scale and translation too:
# scales below 1 (the kernel stretched, away from its kink at 1), cubic (continuously
# differentiable in the points, so first derivatives only)
def _st_cubic(x: Any, s: Any, t: Any) -> Any:
    return scale_and_translate(x, (5,), (0,), s, t, "cubic")


def _st_cubic_ref(x: Any, s: Any, t: Any) -> Any:
    w = _matrix(6, 5, float(s[0]), float(t[0]), _keys_cubic, True)
    return (np.asarray(x, np.float64) @ w).astype(np.asarray(x).dtype)


_ST_2D = (np.array([1.3, 0.7]), np.array([0.4, -0.25]))


ROWS: list[OpInfo] = [
    _resize_row("image.resize[linear,down]", "linear", _down, _resize_ref(_down, _triangle)),
    _resize_row("image.resize[cubic,up]", "cubic", _up, _resize_ref(_up, _keys_cubic)),
    _resize_row(
        "image.resize[lanczos3]", "lanczos3", _up_then_down, _resize_ref(_up_then_down, _lanczos3)
    ),
    _resize_row("image.resize[nearest]", "nearest", _down_then_up, _nearest_ref(_down_then_up)),
    OpInfo(
        "image.scale_and_translate[cubic]",
        _st_cubic,
        _st_cubic_ref,
        (F, Arg(domain=(0.55, 0.9)), Arg(domain=(-0.5, 0.5))),
        ("dot_general",),
        shapes=((6,), (1,), (1,)),
        grad_order=1,
        rtol=1e-12,
        atol=1e-12,
        # the cubic kernel's second derivative jumps at its knots, so near one the
        # central differences in the scale and translation are O(eps) off (float32's
        # eps: 7e-4 seen); at eps=1e-6 they agree with the JVP to 1e-8
        grad_tol=1e-3,
    ),
    OpInfo(
        "image.scale_and_translate[linear,2d]",
        lambda x: scale_and_translate(x, (5, 3), (0, 1), *_ST_2D, "linear", antialias=False),
        lambda x: _apply(
            x,
            {
                0: _matrix(4, 5, 1.3, 0.4, _triangle, False),
                1: _matrix(5, 3, 0.7, -0.25, _triangle, False),
            },
        ),
        (F,),
        ("dot_general",),
        shapes=((4, 5),),
        rtol=1e-12,
        atol=1e-12,
    ),
]
