"""A pure-Python layered drawing of a directed acyclic graph, written as SVG.

The jaxpr drawings (``ClosedJaxpr.to_svg``, the notebook display) use it, so a
picture needs no Graphviz. The module knows nothing of jaxprs: ``functrace.ir``
turns a jaxpr into :class:`Node` and :class:`Edge` lists and calls :func:`render`.

The layout is Sugiyama's, in four steps:

1. **Layers.** Sources (inputs, constants) are layer 0, every other node sits one
   layer below the deepest node it reads (the longest path from the sources),
   sinks (outputs) share the last layer. An edge spanning several layers passes
   through one small *virtual* node per layer crossed.
2. **Order within a layer.** Nodes start in the order given (the program order);
   a few sweeps down and up sort each layer by the barycenter (mean position) of
   its neighbours in the layer above or below; the order with the fewest edge
   crossings seen is kept. The source and sink layers keep the order given.
3. **Coordinates.** Each layer is placed by moving every node toward the mean
   x of its neighbours while keeping the order and a minimum gap (an isotonic
   least-squares fit, pool-adjacent-violators), alternating with the layer above
   and below for a few rounds.
4. **Drawing.** Boxes with their text lines, edges as cubic curves leaving and
   entering vertically, with arrowheads; each node and edge has a ``<title>``
   (a hover tooltip).

Everything is deterministic: the same graph gives the same SVG text. Presentation
is inline attributes only (no ``<style>`` element, which would restyle the page
holding the picture); the arrowhead marker's id carries a hash of the drawing so
that several drawings on one page do not share ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"

# Node kinds and how they look: (fill, stroke, dash, text colour).
_STYLE = {
    "input": ("#dbe9f6", "#4a7bb0", "", "#1b2a3a"),
    "const": ("#ffffff", "#4a7bb0", "4 2", "#1b2a3a"),
    "eqn": ("#eef0f3", "#7b8290", "", "#1e2228"),
    "nested": ("#fff4d6", "#b08a2e", "", "#2e2410"),
    "output": ("#f6e3db", "#b0714a", "", "#3a2218"),
    "summary": ("#fffbe6", "#b08a2e", "", "#2e2410"),
}
_DEAD_STYLE = ("#f5f5f5", "#c4c4c4", "3 2", "#a0a0a0")
_EDGE = "#6b7280"
_DEAD_EDGE = "#cfcfcf"

_FONT = 11.0  # px, first line (bold for equations)
_SMALL = 10.0  # px, the other lines
_CHAR = 0.61  # width of a monospace character in ems
_LINE = 1.3  # line height in ems
_PAD_X = 8.0
_PAD_Y = 5.0
_GAP = 16.0  # between two boxes of one layer
_VGAP = 10.0  # next to a virtual node
_VWIDTH = 8.0  # a virtual node's width
_LAYER_GAP = 42.0
_MARGIN = 12.0
_SWEEPS = 4
_ROUNDS = 4


@dataclass
class Node:
    """One box: ``kind`` is input, const, eqn, nested, output or summary; ``role``
    is source (layer 0), sink (last layer) or inner; ``lines`` its text, the first
    drawn larger; ``tooltip`` its hover text; ``dead`` draws it greyed."""

    key: str
    kind: str
    role: str
    lines: list[str]
    tooltip: str
    dead: bool = False


@dataclass
class Edge:
    """An arrow from node index ``src`` to node index ``dst`` (``src < dst``)."""

    src: int
    dst: int
    tooltip: str
    dead: bool = False


@dataclass
class Layout:
    """Positions (box centers, widths, heights) and edge polylines, in pixels."""

    width: float
    height: float
    x: list[float]
    y: list[float]
    w: list[float]
    h: list[float]
    paths: list[list[tuple[float, float]]] = field(default_factory=list)


def _box_size(lines: Sequence[str]) -> tuple[float, float]:
    widths = [len(s) * _CHAR * (_FONT if i == 0 else _SMALL) for i, s in enumerate(lines)]
    w = max(widths, default=0.0) + 2 * _PAD_X
    h = sum((_FONT if i == 0 else _SMALL) * _LINE for i in range(len(lines))) + 2 * _PAD_Y
    return max(w, 36.0), h


def _layers(nodes: Sequence[Node], edges: Sequence[Edge]) -> list[int]:
    preds: list[list[int]] = [[] for _ in nodes]
    succs: list[list[int]] = [[] for _ in nodes]
    for e in edges:
        preds[e.dst].append(e.src)
        succs[e.src].append(e.dst)
    layer = [0] * len(nodes)
    reached = [n.role == "source" for n in nodes]
    deepest = 0
    for i, n in enumerate(nodes):
        if n.role == "inner":
            layer[i] = 1 + max((layer[p] for p in preds[i]), default=0)
            reached[i] = any(reached[p] for p in preds[i])
            deepest = max(deepest, layer[i])
    for i, n in enumerate(nodes):
        if n.role == "sink":
            layer[i] = deepest + 1
    # Work that reads no input (constants built from literals) sits just above the
    # first node using it, not in the top row.
    for i in range(len(nodes) - 1, -1, -1):
        if nodes[i].role == "inner" and not reached[i] and succs[i]:
            layer[i] = max(1, min(layer[s] for s in succs[i]) - 1)
    used = sorted(set(layer))
    compact = {v: k for k, v in enumerate(used)}
    return [compact[v] for v in layer]


def _crossings(upper_pos: dict[int, int], lower_pos: dict[int, int], links: list[tuple]) -> int:
    """Crossings between two adjacent layers: inversions of the lower positions
    once the links are sorted by upper position (a Fenwick tree count)."""
    pairs = sorted((upper_pos[a], lower_pos[b]) for a, b in links)
    size = len(lower_pos) + 1
    tree = [0] * (size + 1)
    count = 0
    seen = 0
    for _, b in pairs:
        i = b + 1
        le = 0
        while i > 0:
            le += tree[i]
            i -= i & -i
        count += seen - le
        i = b + 1
        while i <= size:
            tree[i] += 1
            i += i & -i
        seen += 1
    return count


def layout(nodes: Sequence[Node], edges: Sequence[Edge]) -> Layout:
    """The layered layout of ``nodes`` and ``edges``: box centers and sizes, and one
    polyline per edge (through its virtual nodes), in pixels, top to bottom."""
    n_real = len(nodes)
    layer = _layers(nodes, edges)
    sizes = [_box_size(n.lines) for n in nodes]
    widths = [s[0] for s in sizes]
    heights = [s[1] for s in sizes]
    virtual = [False] * n_real
    # Split long edges into chains through virtual nodes.
    chains: list[list[int]] = []
    links: list[tuple[int, int]] = []
    for e in edges:
        chain = [e.src]
        for lv in range(layer[e.src] + 1, layer[e.dst]):
            layer.append(lv)
            widths.append(_VWIDTH)
            heights.append(0.0)
            virtual.append(True)
            chain.append(len(layer) - 1)
        chain.append(e.dst)
        chains.append(chain)
        links.extend(zip(chain, chain[1:], strict=False))
    n_all = len(layer)
    n_layers = max(layer, default=-1) + 1
    up: list[list[int]] = [[] for _ in range(n_all)]
    down: list[list[int]] = [[] for _ in range(n_all)]
    for a, b in links:
        down[a].append(b)
        up[b].append(a)
    order: list[list[int]] = [[] for _ in range(n_layers)]
    for i in range(n_all):
        order[layer[i]].append(i)
    fixed = [
        bool(order[lv]) and all(i < n_real and nodes[i].role != "inner" for i in order[lv])
        for lv in range(n_layers)
    ]
    by_layer: list[list[tuple[int, int]]] = [[] for _ in range(n_layers)]
    for a, b in links:
        by_layer[layer[a]].append((a, b))

    def total_crossings(order: list[list[int]]) -> int:
        pos = [dict((v, k) for k, v in enumerate(row)) for row in order]
        return sum(_crossings(pos[lv], pos[lv + 1], by_layer[lv]) for lv in range(n_layers - 1))

    def sweep(order: list[list[int]], downward: bool) -> None:
        rng = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
        for lv in rng:
            if fixed[lv]:
                continue
            ref = order[lv - 1] if downward else order[lv + 1]
            rpos = {v: k for k, v in enumerate(ref)}
            keyed = []
            for k, v in enumerate(order[lv]):
                nb = up[v] if downward else down[v]
                bary = sum(rpos[u] for u in nb) / len(nb) if nb else float(k)
                keyed.append((bary, k, v))
            keyed.sort()
            order[lv] = [v for _, _, v in keyed]

    # Big drawings (thousands of virtual nodes) get fewer passes: a few seconds at most.
    sweeps, rounds = (_SWEEPS, _ROUNDS) if n_all <= 4000 else (2, 2)
    best = [row[:] for row in order]
    best_cross = total_crossings(best)
    for _ in range(sweeps):
        for downward in (True, False):
            sweep(order, downward)
            c = total_crossings(order)
            if c < best_cross:
                best, best_cross = [row[:] for row in order], c
    order = best

    # Coordinates: x by isotonic fits toward the neighbours' mean, y by layers.
    x = [0.0] * n_all

    def gap(a: int, b: int) -> float:
        g = _VGAP if virtual[a] or virtual[b] else _GAP
        return (widths[a] + widths[b]) / 2 + g

    def place(row: list[int], desired: list[float]) -> None:
        # Weighted isotonic fit: virtual nodes weigh more, so long edges run straight.
        offs = [0.0]
        for a, b in zip(row, row[1:], strict=False):
            offs.append(offs[-1] + gap(a, b))
        blocks: list[list[float]] = []  # [weighted sum, weight, count]
        for v, d, o in zip(row, desired, offs, strict=True):
            wt = 4.0 if virtual[v] else 1.0
            blocks.append([(d - o) * wt, wt, 1])
            while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
                s, wsum, c = blocks.pop()
                blocks[-1][0] += s
                blocks[-1][1] += wsum
                blocks[-1][2] += c
        k = 0
        for s, wsum, c in blocks:
            for _ in range(int(c)):
                x[row[k]] = s / wsum + offs[k]
                k += 1

    for row in order:
        if row:
            place(row, [0.0] * len(row))
    for r in range(rounds):
        passes = (True, False) if r < rounds - 1 else (None,)
        for direction in passes:
            rows = range(n_layers) if direction is not False else range(n_layers - 1, -1, -1)
            for lv in rows:
                row = order[lv]
                desired = []
                for v in row:
                    nb = up[v] if direction else down[v] if direction is False else up[v] + down[v]
                    desired.append(sum(x[u] for u in nb) / len(nb) if nb else x[v])
                if row:
                    place(row, desired)
    # Straighten long edges: move a chain's virtual nodes to one x where that keeps
    # every layer's order and gaps (first a median, then each end's x).
    slot = {v: (lv, k) for lv, row in enumerate(order) for k, v in enumerate(row)}

    def fits(v: int, at: float) -> bool:
        lv, k = slot[v]
        row = order[lv]
        if k > 0 and x[row[k - 1]] + gap(row[k - 1], v) > at + 1e-9:
            return False
        return not (k + 1 < len(row) and at + gap(v, row[k + 1]) > x[row[k + 1]] + 1e-9)

    for chain in chains:
        inner = chain[1:-1]
        if len(inner) < 2:
            continue
        xs = sorted(x[v] for v in inner)
        for at in (xs[len(xs) // 2], x[inner[0]], x[inner[-1]]):
            if all(fits(v, at) for v in inner):
                for v in inner:
                    x[v] = at
                break
    left = min((x[i] - widths[i] / 2 for i in range(n_all)), default=0.0)
    right = max((x[i] + widths[i] / 2 for i in range(n_all)), default=0.0)
    x = [v - left + _MARGIN for v in x]
    layer_h = [0.0] * n_layers
    for i in range(n_all):
        layer_h[layer[i]] = max(layer_h[layer[i]], heights[i])
    tops = []
    t = _MARGIN
    for lv in range(n_layers):
        tops.append(t)
        t += layer_h[lv] + _LAYER_GAP
    height = (t - _LAYER_GAP if n_layers else t) + _MARGIN
    y = [tops[layer[i]] + layer_h[layer[i]] / 2 for i in range(n_all)]

    # Edge polylines with spread ports on the real boxes.
    out_slots: dict[tuple[int, int], float] = {}
    in_slots: dict[tuple[int, int], float] = {}
    for i in range(n_real):
        for slots, nbrs, key in ((out_slots, down[i], 0), (in_slots, up[i], 1)):
            ranked = sorted(set(nbrs), key=lambda u: (x[u], u))
            span = widths[i] * 0.6
            for k, u in enumerate(ranked):
                off = span * ((k + 0.5) / len(ranked) - 0.5) if len(ranked) > 1 else 0.0
                slots[(i, u) if key == 0 else (u, i)] = x[i] + off
    paths = []
    for chain in chains:
        a, b = chain[0], chain[-1]
        pts = [(out_slots[(a, chain[1])], y[a] + heights[a] / 2)]
        for v in chain[1:-1]:
            lt = tops[layer[v]]
            pts.append((x[v], lt))
            pts.append((x[v], lt + layer_h[layer[v]]))
        pts.append((in_slots[(chain[-2], b)], y[b] - heights[b] / 2))
        pts = [(round(px, 1), py) for px, py in pts]
        # A straight vertical run through several layers is one segment.
        keep = [
            p
            for k, p in enumerate(pts)
            if k in (0, len(pts) - 1) or not (pts[k - 1][0] == p[0] == pts[k + 1][0])
        ]
        paths.append(keep)
    width = right - left + 2 * _MARGIN if n_all else 2 * _MARGIN
    return Layout(width, height, x[:n_real], y[:n_real], widths[:n_real], heights[:n_real], paths)


def _f(v: float) -> str:
    s = f"{v:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _path_d(pts: Sequence[tuple[float, float]]) -> str:
    (x0, y0), rest = pts[0], pts[1:]
    d = [f"M{_f(x0)},{_f(y0)}"]
    for x1, y1 in rest:
        if x1 == x0:
            d.append(f"L{_f(x1)},{_f(y1)}")
        else:
            m = (y0 + y1) / 2
            d.append(f"C{_f(x0)},{_f(m)} {_f(x1)},{_f(m)} {_f(x1)},{_f(y1)}")
        x0, y0 = x1, y1
    return " ".join(d)


def _title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def render(nodes: Sequence[Node], edges: Sequence[Edge], empty_text: str = "empty") -> str:
    """The SVG text of the graph (``empty_text`` in a box when there is no node)."""
    if not nodes:
        nodes = [Node("empty", "summary", "source", [empty_text], empty_text)]
        edges = []
    lay = layout(nodes, edges)
    digest = hashlib.sha1(
        "\n".join(f"{n.key}|{n.tooltip}|{n.dead}" for n in nodes).encode()
    ).hexdigest()[:10]
    arrow, dead_arrow = f"ft-arrow-{digest}", f"ft-arrow-dead-{digest}"
    w, h = _f(lay.width), _f(lay.height)
    out = [
        f'<svg xmlns="{SVG_NS}" class="functrace-graph" width="{w}" height="{h}" '
        f'viewBox="0 0 {w} {h}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
        'style="max-width:100%;height:auto">',
        "<defs>",
    ]
    for mid, color in ((arrow, _EDGE), (dead_arrow, _DEAD_EDGE)):
        out.append(
            f'<marker id="{mid}" markerWidth="7" markerHeight="7" refX="7" refY="3.5" '
            f'orient="auto" markerUnits="userSpaceOnUse"><path d="M0,0 L7,3.5 L0,7 z" '
            f'fill="{color}"/></marker>'
        )
    out.append("</defs>")
    out.append(f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>')
    for e, pts in zip(edges, lay.paths, strict=True):
        d = _path_d(pts)
        color, mark = (_DEAD_EDGE, dead_arrow) if e.dead else (_EDGE, arrow)
        dash = ' stroke-dasharray="4 3"' if e.dead else ""
        out.append(
            f'<g class="edge{" dead" if e.dead else ""}" data-src="{nodes[e.src].key}" '
            f'data-dst="{nodes[e.dst].key}">{_title(e.tooltip)}'
            f'<path d="{d}" fill="none" stroke="#000000" stroke-opacity="0" stroke-width="8" '
            f'pointer-events="stroke"/>'
            f'<path d="{d}" fill="none" stroke="{color}" stroke-width="1.2"{dash} '
            f'marker-end="url(#{mark})"/></g>'
        )
    for i, n in enumerate(nodes):
        fill, stroke, dash, ink = _DEAD_STYLE if n.dead else _STYLE[n.kind]
        bw, bh = lay.w[i], lay.h[i]
        bx, by = lay.x[i] - bw / 2, lay.y[i] - bh / 2
        cls = f"node {n.kind}" + (" dead" if n.dead else "")
        rx = "3" if n.kind in ("input", "const", "output") else "7"
        out.append(f'<g class="{cls}" id={quoteattr(n.key)}>{_title(n.tooltip)}')
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        sw = "1.8" if n.kind == "nested" else "1"
        out.append(
            f'<rect x="{_f(bx)}" y="{_f(by)}" width="{_f(bw)}" height="{_f(bh)}" rx="{rx}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{sw}"{dash_attr}/>'
        )
        ty = by + _PAD_Y
        # A summary is a left-aligned list; other boxes center their lines.
        tx, anchor = (bx + _PAD_X, "start") if n.kind == "summary" else (lay.x[i], "middle")
        for k, line in enumerate(n.lines):
            size = _FONT if k == 0 else _SMALL
            ty += size * _LINE
            weight = ' font-weight="bold"' if k == 0 and n.kind in ("eqn", "nested") else ""
            out.append(
                f'<text x="{_f(tx)}" y="{_f(ty - size * 0.32)}" font-size="{_f(size)}" '
                f'text-anchor="{anchor}" fill="{ink}"{weight}>{escape(line)}</text>'
            )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


class SvgDrawing:
    """An SVG picture that a notebook displays (``_repr_svg_``); ``str()`` or
    ``.svg`` is its text, ``save(path)`` writes it to a file."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"<SvgDrawing {len(self.svg)} characters>"

    def save(self, path: str) -> None:
        """Write the SVG text to ``path`` (UTF-8)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.svg)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def wrap(parts: Sequence[str], limit: int) -> list[str]:
    """Space-joined ``parts`` broken into lines of at most ``limit`` characters,
    breaking only between parts (a part longer than a line is shortened)."""
    lines: list[str] = []
    cur = ""
    for p in parts:
        p = shorten(p, limit)
        if cur and len(cur) + 1 + len(p) > limit:
            lines.append(cur)
            cur = p
        else:
            cur = f"{cur} {p}" if cur else p
    if cur:
        lines.append(cur)
    return lines


__all__ = ["Edge", "Layout", "Node", "SvgDrawing", "layout", "render", "shorten", "wrap"]
