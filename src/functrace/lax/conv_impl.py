"""The NumPy impl of ``conv_general_dilated`` (the primitive and its rules are in
``convolution.py``): an im2col over a strided view of the padded, lhs-dilated input
and BLAS products, in three shapes chosen per call from the sizes and the memory
order of the operands:

* patch rows (channels innermost, for channels-last inputs with 4+ channels) or patch
  columns (runs along the last output axis, the product computed transposed), in
  blocks of batch rows that stay in cache (``_BLOCK``);
* few output positions with deep patches (kernel gradients, whose positions are the
  taps): one product per position over the whole batch, or all positions stacked in one
  product when the batch rows are few (``_FEW_POSITIONS``, ``_STACK``);
* stride 1 without lhs dilation and fewer input positions x out features than output
  positions x in features (input gradients of layers with fewer out than in channels):
  products then shifted adds (col2im, ``_SCATTER_RATIO``).

The module constants are the switches; the tests set them to force each path.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def dilate_dim(d: int, r: int) -> int:
    """The size of a dimension of ``d`` elements dilated by ``r`` (``r - 1`` holes)."""
    return 0 if d == 0 else 1 + r * (d - 1)


def _padded_input(
    lhs: np.ndarray, spec: tuple[int, ...], pads: tuple[tuple[int, int], ...], ld: tuple[int, ...]
) -> np.ndarray:
    """The lhs-dilated, padded (negative pads: cropped) input, canonical (N, C, S...)
    view; the buffer keeps the memory order of ``lhs``."""
    x = np.transpose(lhs, spec)
    n, c, *sp = x.shape
    if all(d == 1 for d in ld) and all(lo <= 0 and hi <= 0 for lo, hi in pads):
        crop = (slice(-lo, max(0, s + hi)) for s, (lo, hi) in zip(sp, pads))
        return x[(slice(None), slice(None), *crop)]
    full = [max(0, dilate_dim(s, d) + lo + hi) for s, d, (lo, hi) in zip(sp, ld, pads)]
    buf_shape = [0] * lhs.ndim
    for j, a in enumerate(spec):
        buf_shape[a] = (n, c, *full)[j]
    buf = np.zeros(buf_shape, lhs.dtype)
    xp = np.transpose(buf, spec)
    src, dst = [slice(None)] * 2, [slice(None)] * 2
    for s, d, (lo, _hi), f in zip(sp, ld, pads, full):
        i0 = max(0, -(lo // d)) if lo < 0 else 0  # first input index landing at >= 0
        i1 = min(s - 1, (f - 1 - lo) // d) if f > 0 else -1  # last landing at < f
        if i1 < i0:
            return xp
        src.append(slice(i0, i1 + 1))
        dst.append(slice(i0 * d + lo, i1 * d + lo + 1, d))
    xp[tuple(dst)] = x[tuple(src)]
    return xp


_BLOCK = 1 << 17  # elements of a patch matrix block (0.5-1 MB: it stays in cache)
_FEW_POSITIONS = 32  # below this many output positions, one product per position
_STACK = 1 << 21  # ... stacked into one product when their patches have this many elements
_SCATTER_BLOCK = 1 << 22  # elements of a product block of the scatter path
_SCATTER_RATIO = 0.5  # scatter when (inputs x out features) < this x (outputs x in features)


def _scatter_conv(
    lhs: np.ndarray,
    w: np.ndarray,
    lspec: tuple[int, ...],
    pads: tuple[tuple[int, int], ...],
    rd: tuple[int, ...],
    outs: list[int],
    groups: int,
) -> np.ndarray:
    """A stride-1 convolution without lhs dilation as one product then shifted adds
    (col2im): ``Y[k, o, n, q] = sum_i w[o, i, k] x[n, i, q]`` for every tap ``k``,
    added into the full correlation at ``u = q + (kd - 1) - k*rd``, then cropped to the
    padding. The input sits on a grid whose rows have the full output's pitch, so each
    tap's add is one shifted run per (out feature, batch row). Cheaper than gathering
    patches when the input has fewer positions times out features than the output has
    positions times in features: the lhs transpose of a convolution with fewer out than
    in channels. Returns (O, N, P...)."""
    ns = lhs.ndim - 2
    x = np.transpose(lhs, (lspec[0], *lspec[2:], lspec[1]))  # (N, Q..., C)
    n, *qs, c = x.shape
    o_feat, ig, *ks = w.shape
    og = o_feat // groups
    kd = [dilate_dim(k, r) for k, r in zip(ks, rd)]
    full = [q + k - 1 for q, k in zip(qs, kd)]  # the full correlation's sizes
    grid = (qs[0], *full[1:])
    if tuple(grid) != tuple(qs):  # rows padded with zeros to the full pitch
        xg = np.zeros((n, *grid, c), lhs.dtype)
        xg[(slice(None), *(slice(0, q) for q in qs))] = x
        x = xg
    pitch = [math.prod(full[d + 1 :]) for d in range(ns)]
    ln = math.prod(grid)
    taps = list(np.ndindex(*ks))
    offs = [sum((k - 1 - t * r) * p for k, t, r, p in zip(kd, tap, rd, pitch)) for tap in taps]
    acc = np.zeros((o_feat, n, math.prod(full) + max(offs) + ln), lhs.dtype)
    rows = max(1, _SCATTER_BLOCK // (len(taps) * og * ln))  # batch rows per product
    for grp in range(groups):
        # (og, I, K...) -> (K..., og, I): row (k, o) of the product is tap k of out feature o
        wg = np.transpose(w[grp * og : (grp + 1) * og], (*range(2, 2 + ns), 0, 1))
        wg = wg.reshape(len(taps) * og, ig)
        xs = x[..., grp * ig : (grp + 1) * ig] if groups > 1 else x
        xs = xs.reshape(n, ln, ig)
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            y = np.matmul(wg, xs[r0:r1].reshape((r1 - r0) * ln, ig).T)
            y = y.reshape(len(taps), og, r1 - r0, ln)
            ag = acc[grp * og : (grp + 1) * og, r0:r1]
            for j, off in enumerate(offs):
                ag[:, :, off : off + ln] += y[j]
    acc_full = acc[:, :, : math.prod(full)].reshape(o_feat, n, *full)
    # output p is full index p + (kd - 1 - lo); outside the full correlation it is zero
    shift = [k - 1 - lo for k, (lo, _hi) in zip(kd, pads)]
    if all(sh >= 0 and sh + p <= f for sh, p, f in zip(shift, outs, full)):
        return acc_full[
            (slice(None), slice(None), *(slice(sh, sh + p) for sh, p in zip(shift, outs)))
        ]
    out = np.zeros((o_feat, n, *outs), lhs.dtype)
    src, dst = [], []
    for sh, p, f in zip(shift, outs, full):
        p0, p1 = max(0, -sh), min(p, f - sh)
        if p1 <= p0:
            return out
        src.append(slice(p0 + sh, p1 + sh))
        dst.append(slice(p0, p1))
    out[(slice(None), slice(None), *dst)] = acc_full[(slice(None), slice(None), *src)]
    return out


def conv_impl(
    lhs: Any,
    rhs: Any,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: Any,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: np.dtype | None,
) -> Any:
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if preferred_element_type is not None:
        lhs = lhs.astype(preferred_element_type, copy=False)
        rhs = rhs.astype(preferred_element_type, copy=False)
    lspec, rspec, ospec = dimension_numbers
    ns = lhs.ndim - 2
    w = np.transpose(rhs, rspec)  # (O, I, K...)
    o_feat, i_feat, *ks = w.shape
    g, b = feature_group_count, batch_group_count
    n = lhs.shape[lspec[0]] // b
    spatial = tuple(range(2, 2 + ns))
    kd = [dilate_dim(k, d) for k, d in zip(ks, rhs_dilation)]
    q_sp = [lhs.shape[a] for a in lspec[2:]]
    padded = [
        max(0, dilate_dim(q, d) + lo + hi) for q, d, (lo, hi) in zip(q_sp, lhs_dilation, padding)
    ]
    outs = [max(0, (p - k) // s + 1) for p, k, s in zip(padded, kd, window_strides)]
    if 0 in (n, o_feat, *outs) or 0 in w.shape:
        empty = np.zeros((n, o_feat, *outs), lhs.dtype)
        return np.ascontiguousarray(empty.transpose(np.argsort(ospec)))
    og = o_feat // (g * b)
    depth = i_feat * math.prod(ks)
    npos = math.prod(outs)
    rows = max(1, _BLOCK // max(1, depth * npos))  # batch rows per block
    kax = tuple(range(2 + ns, 2 + 2 * ns))  # window axes of a group's (n, I, P..., K...)
    # Channels innermost in memory (NHWC) and enough of them: patch rows (P..., K..., I),
    # read in runs of I. Otherwise patch columns (I, K... | n, P...), read in runs along
    # the last output axis, and the product is computed transposed.
    last = lhs.strides[lspec[1]] <= min((abs(lhs.strides[a]) for a in lspec[2:]), default=0)
    grid = [q + k - 1 if d else q for d, (q, k) in enumerate(zip(q_sp, kd))]
    scatter = (
        b == 1
        and all(st == 1 for st in window_strides)
        and all(d == 1 for d in lhs_dilation)
        and math.prod(grid) * o_feat < _SCATTER_RATIO * npos * i_feat * g
    )
    if not scatter:
        xp = _padded_input(lhs, lspec, padding, lhs_dilation)
        win = np.lib.stride_tricks.sliding_window_view(xp, kd, axis=spatial)
        win = win[
            (slice(None), slice(None))
            + tuple(slice(None, None, s) for s in window_strides)
            + tuple(slice(None, None, d) for d in rhs_dilation)
        ]  # (N, C, P..., K...)
        win = win.reshape(b, n, g, i_feat, *win.shape[2:])
    if scatter:
        out = _scatter_conv(lhs, w, lspec, padding, rhs_dilation, outs, g)
        canon_perm = (1, 0, *range(2, 2 + ns))  # (O, N, P...) -> (N, O, P...)
    elif npos < _FEW_POSITIONS and depth * npos > _BLOCK:
        # Few output positions, deep patches (the kernel's gradient, whose positions are
        # the taps): one product per position over the whole batch, the patch gathered
        # with the lhs axis of smallest stride innermost.
        out = np.empty((o_feat, n, *outs), lhs.dtype)
        strides = [abs(lhs.strides[a]) if lhs.shape[a] > 1 else math.inf for a in lspec]
        batch_inner = strides[0] <= min(strides[1:]) and strides[0] < math.inf
        for grp in range(g * b):
            wg = w[grp * og : (grp + 1) * og].reshape(og, depth)
            pg = win[grp // g if b > 1 else 0, :, grp if g > 1 else 0]  # (n, I, P..., K...)
            dst_g = out[grp * og : (grp + 1) * og]
            pax = tuple(range(2, 2 + ns))
            if n * npos * depth <= _STACK:  # few batch rows: all positions in one product
                if batch_inner:
                    pm_t = np.transpose(pg, (1, *kax, *pax, 0)).reshape(depth, npos * n)
                    res = np.matmul(wg, pm_t).reshape(og, *outs, n)
                    dst_g[...] = np.moveaxis(res, -1, 1)
                else:
                    pm = np.transpose(pg, (*pax, 0, 1, *kax)).reshape(npos * n, depth)
                    res = np.matmul(pm, wg.T).reshape(*outs, n, og)
                    dst_g[...] = np.transpose(res, (ns + 1, ns, *range(ns)))
                continue
            for pos in np.ndindex(*outs):
                pm = pg[(slice(None), slice(None), *pos)]  # (n, I, K...)
                dst = (slice(grp * og, (grp + 1) * og), slice(None), *pos)
                if batch_inner:
                    pm_t = np.transpose(pm, (*range(1, 2 + ns), 0)).reshape(depth, n)
                    out[dst] = np.matmul(wg, pm_t)
                else:
                    out[dst] = np.matmul(pm.reshape(n, depth), wg.T).T
        canon_perm = (1, 0, *range(2, 2 + ns))  # (O, N, P...) -> (N, O, P...)
    elif last and i_feat >= 4:
        wperm = (0, *range(2, 2 + ns), 1)
        pperm = (0, *range(2, 2 + ns), *kax, 1)
        out = np.empty((n, *outs, o_feat), lhs.dtype)
        out2 = out.reshape(n * npos, o_feat)
        for grp in range(g * b):
            wg = np.transpose(w[grp * og : (grp + 1) * og], wperm).reshape(og, depth).T
            pg = np.transpose(win[grp // g if b > 1 else 0, :, grp if g > 1 else 0], pperm)
            for r0 in range(0, n, rows):
                r1 = min(n, r0 + rows)
                res = np.matmul(pg[r0:r1].reshape((r1 - r0) * npos, depth), wg)
                out2[r0 * npos : r1 * npos, grp * og : (grp + 1) * og] = res
        canon_perm = (0, 1 + ns, *range(1, 1 + ns))  # (N, P..., O) -> (N, O, P...)
    else:
        pperm = (1, *kax, 0, *range(2, 2 + ns))
        out = np.empty((o_feat, n, *outs), lhs.dtype)
        out2 = out.reshape(o_feat, n * npos)
        for grp in range(g * b):
            wg = w[grp * og : (grp + 1) * og].reshape(og, depth)
            pg = np.transpose(win[grp // g if b > 1 else 0, :, grp if g > 1 else 0], pperm)
            for r0 in range(0, n, rows):
                r1 = min(n, r0 + rows)
                cols = pg[(Ellipsis, slice(r0, r1)) + (slice(None),) * ns]
                cols = cols.reshape(depth, (r1 - r0) * npos)
                out2[grp * og : (grp + 1) * og, r0 * npos : r1 * npos] = np.matmul(wg, cols)
        canon_perm = (1, 0, *range(2, 2 + ns))  # (O, N, P...) -> (N, O, P...)
    final = tuple(canon_perm[j] for j in np.argsort(ospec))
    if final == tuple(range(lhs.ndim)):
        return out
    return np.ascontiguousarray(np.transpose(out, final))
