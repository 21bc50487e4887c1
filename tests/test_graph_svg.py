"""Jaxpr drawings without Graphviz: ``ClosedJaxpr.to_svg``, ``draw`` and the notebook
display, checked on the parsed SVG (nodes, labels, edges, dead equations, layout)."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import functrace as ft
import functrace.numpy as fnp
from functrace import lax
from functrace.ir import Var, dce_jaxpr, pp_eqn, var_namer

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def no_dot(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A kernel without Graphviz: no ``dot`` on PATH, ``shutil.which`` finds nothing."""
    monkeypatch.setenv("PATH", str(tmp_path))
    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda cmd, *a, **k: None if cmd == "dot" else real_which(cmd, *a, **k)
    )


def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = fnp.tanh(x @ w1 + b1)
    return fnp.mean((h @ w2 + b2 - y) ** 2)


def _mlp_args(dtype=np.float64):
    r = np.random.default_rng(0)
    params = (
        (r.normal(size=(3, 4)).astype(dtype), np.zeros(4, dtype)),
        (r.normal(size=(4, 2)).astype(dtype), np.zeros(2, dtype)),
    )
    return params, r.normal(size=(5, 3)).astype(dtype), r.normal(size=(5, 2)).astype(dtype)


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    return root


def _groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{NS}g") if cls in g.get("class", "").split()]


def _texts(g: ET.Element) -> list[str]:
    return [t.text or "" for t in g.iter(f"{NS}text")]


def _title(g: ET.Element) -> str:
    t = g.find(f"{NS}title")
    assert t is not None
    return t.text or ""


def _box(g: ET.Element) -> tuple[float, float, float, float]:
    r = g.find(f"{NS}rect")
    assert r is not None
    return tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))  # type: ignore[return-value]


def _dependencies(jaxpr, eqns) -> int:
    """Edges a drawing must have: one per distinct variable each drawn equation reads,
    one per output that is a variable."""
    n = sum(len({id(x) for x in e.inputs if isinstance(x, Var)}) for e in eqns)
    return n + sum(isinstance(x, Var) for x in jaxpr.outvars)


def _printed_eqns(jaxpr) -> list[str]:
    name = var_namer()
    for v in (*jaxpr.constvars, *jaxpr.invars):
        name(v)
    return [pp_eqn(e, name) for e in jaxpr.eqns]


@pytest.mark.parametrize("which", ["loss", "grad"])
def test_mlp_displays_as_picture_without_graphviz(no_dot, which) -> None:
    assert shutil.which("dot") is None
    fun = _mlp_loss if which == "loss" else ft.grad(_mlp_loss)
    closed = ft.make_jaxpr(fun)(*_mlp_args())
    bundle = closed._repr_mimebundle_()
    assert bundle["text/plain"] == str(closed)
    assert bundle["text/vnd.graphviz"] == closed.to_dot()
    svg = bundle["image/svg+xml"]
    assert svg == closed.to_svg()
    root = _parse(svg)
    eqn_nodes = _groups(root, "eqn") + _groups(root, "nested")
    assert len(eqn_nodes) == len(closed.eqns) > 10
    # One node per equation, in program order, each titled with its printed line and
    # labelled with its primitive (and its parameters as printed).
    ids = sorted((int(g.get("id")[1:]), g) for g in eqn_nodes)
    assert [i for i, _ in ids] == list(range(len(closed.eqns)))
    printed = _printed_eqns(closed.jaxpr)
    for (_, g), line, eqn in zip(ids, printed, closed.eqns, strict=True):
        assert _title(g).startswith(line)
        assert " ".join(_texts(g)).split()[0] == eqn.primitive.name
        assert line in str(closed)
    assert len(_groups(root, "input")) == len(closed.jaxpr.invars) == 6
    assert len(_groups(root, "output")) == len(closed.jaxpr.outvars)
    assert len(_groups(root, "edge")) == _dependencies(closed.jaxpr, closed.eqns)


def test_labels_show_params_as_printed() -> None:
    closed = ft.make_jaxpr(ft.grad(_mlp_loss))(*_mlp_args(np.float32))
    root = _parse(closed.to_svg())
    labels = [" ".join(_texts(g)) for g in _groups(root, "eqn")]
    assert any(t.startswith("reduce_sum axes=(0,)") for t in labels)
    assert any(t.startswith("dot_general dimension_numbers=(((1,),(0,)),((),()))") for t in labels)
    # the weight gradients' products (x.T @ ct, written without a transpose)
    assert any(t.startswith("dot_general dimension_numbers=(((0,),(0,)),((),()))") for t in labels)
    # None-valued params are left out of the label (the tooltip keeps them).
    assert not any("preferred_element_type" in t for t in labels)
    assert any("preferred_element_type=None" in _title(g) for g in _groups(root, "eqn"))
    # The last line is "operands -> results" with the printer's names and types.
    assert any(t.endswith("10.0:f32[] → w:f32[]") for t in labels)
    edge_tips = {_title(g) for g in _groups(root, "edge")}
    assert {"a:f32[3,4]", "j:f32[5,4]", "y:f32[5,2]"} <= edge_tips


def test_edges_join_their_boxes() -> None:
    closed = ft.make_jaxpr(ft.grad(_mlp_loss))(*_mlp_args())
    root = _parse(closed.to_svg())
    boxes = {g.get("id"): _box(g) for g in _groups(root, "node")}
    for g in _groups(root, "edge"):
        d = g.findall(f"{NS}path")[-1].get("d")
        first = d.split()[0][1:].split(",")
        last = d.split()[-1].lstrip("CL").split(",")
        sx, sy, sw, sh = boxes[g.get("data-src")]
        tx, ty, tw, th = boxes[g.get("data-dst")]
        assert float(first[1]) == pytest.approx(sy + sh, abs=0.11)
        assert sx <= float(first[0]) <= sx + sw
        assert float(last[1]) == pytest.approx(ty, abs=0.11)
        assert tx <= float(last[0]) <= tx + tw
        assert float(first[1]) < float(last[1])  # edges point down


def test_no_overlapping_boxes() -> None:
    for fun, args in [
        (ft.grad(_mlp_loss), _mlp_args()),
        (_mlp_loss, _mlp_args()),
        (lambda x, y: x * y + x**2, (2.0, 3.0)),
    ]:
        root = _parse(ft.make_jaxpr(fun)(*args).to_svg())
        boxes = [_box(g) for g in _groups(root, "node")]
        width, height = float(root.get("width")), float(root.get("height"))
        for k, (x0, y0, w0, h0) in enumerate(boxes):
            assert 0 <= x0 and x0 + w0 <= width and 0 <= y0 and y0 + h0 <= height
            for x1, y1, w1, h1 in boxes[k + 1 :]:
                apart = x0 + w0 <= x1 or x1 + w1 <= x0 or y0 + h0 <= y1 or y1 + h1 <= y0
                assert apart, ((x0, y0, w0, h0), (x1, y1, w1, h1))
        # Long edges run straight down between the boxes of the layers they cross.
        crossings = 0
        for g in _groups(root, "edge"):
            d = g.findall(f"{NS}path")[-1].get("d").split()
            end = tuple(map(float, d[0][1:].split(",")))
            for tok in d[1:]:
                pt = tuple(map(float, tok.lstrip("CL").split(",")))
                if tok.startswith("L"):
                    crossings += 1
                    mx, my = end[0], (end[1] + pt[1]) / 2
                    assert not any(
                        bx <= mx <= bx + bw and by <= my <= by + bh for bx, by, bw, bh in boxes
                    ), (mx, my)
                end = pt
        assert crossings > 0 or len(boxes) < 10


def test_dead_equations_greyed_or_hidden() -> None:
    closed = ft.make_jaxpr(ft.grad(_mlp_loss))(*_mlp_args())
    live = dce_jaxpr(closed.jaxpr).eqns
    n_dead = len(closed.eqns) - len(live)
    assert n_dead >= 3  # the loss value, its mean and the unused negation
    root = _parse(closed.to_svg(show_dead=True))
    dead = _groups(root, "dead")
    dead_nodes = [g for g in dead if "node" in g.get("class").split()]
    assert len(dead_nodes) == n_dead
    assert all(_title(g).endswith("(dead: no output uses it)") for g in dead_nodes)
    assert {g.get("id") for g in dead_nodes} == {
        f"e{i}" for i, e in enumerate(closed.eqns) if not any(e is k for k in live)
    }
    # Dead edges are those into dead equations.
    dead_edges = [g for g in dead if "edge" in g.get("class").split()]
    assert {g.get("data-dst") for g in dead_edges} <= {g.get("id") for g in dead_nodes}
    dead_eqns = [e for e in closed.eqns if not any(e is k for k in live)]
    assert len(dead_edges) == _dependencies(closed.jaxpr, dead_eqns) - len(closed.jaxpr.outvars)
    hidden = _parse(closed.to_svg(show_dead=False))
    assert not _groups(hidden, "dead")
    assert len(_groups(hidden, "eqn")) == len(live)
    assert len(_groups(hidden, "edge")) == _dependencies(closed.jaxpr, live)
    # Hidden equations keep the printed names of the others.
    shown = {_title(g) for g in _groups(hidden, "eqn")}
    assert shown <= set(_printed_eqns(closed.jaxpr))


def test_effectful_equation_is_not_dead() -> None:
    def f(x):
        ft.debug.print("x={}", x)
        return x * 2

    closed = ft.make_jaxpr(f)(1.0)
    root = _parse(closed.to_svg(show_dead=False))
    assert [_texts(g)[0] for g in _groups(root, "eqn")] == [
        "debug_callback callback=debug_print",
        "mul",
    ]
    assert not _groups(_parse(closed.to_svg()), "dead")


def test_nested_jaxprs_are_one_node() -> None:
    def f(x, xs):
        y = lax.cond(x > 0, lambda v: v * 2, lambda v: -v, x)
        c, ys = lax.scan(lambda c, v: (c + v, c * v), y, xs)
        return c + fnp.sum(ys)

    closed = ft.make_jaxpr(f)(1.0, np.ones(3))
    root = _parse(closed.to_svg())
    nested = {_texts(g)[0]: g for g in _groups(root, "nested")}
    assert set(nested) == {"cond branches=(2 jaxprs)", "scan jaxpr={2 eqns} num_consts=0"}
    scan = nested["scan jaxpr={2 eqns} num_consts=0"]
    assert "num_carry=1 length=3" in " ".join(_texts(scan))
    assert "add a b" in _title(scan)  # the tooltip prints the body
    n_eqns = len(_groups(root, "eqn")) + len(nested)
    assert n_eqns == len(closed.eqns)  # the sub-jaxprs' equations are not drawn
    assert len(_groups(root, "edge")) == _dependencies(closed.jaxpr, closed.eqns)
    whiles = ft.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 3, lambda c: c + 1, x))(1.0)
    (w,) = _groups(_parse(whiles.to_svg()), "nested")
    assert " ".join(_texts(w)).startswith("while cond_jaxpr={1 eqn} body_jaxpr={1 eqn}")


def test_empty_identity_literal_and_constants() -> None:
    empty = _parse(ft.make_jaxpr(lambda: ())().to_svg())
    assert not _groups(empty, "node") or [g.get("id") for g in _groups(empty, "node")] == ["empty"]
    assert "empty jaxpr" in " ".join(t.text or "" for t in empty.iter(f"{NS}text"))
    ident = _parse(ft.make_jaxpr(lambda x: x)(1.0).to_svg())
    assert len(_groups(ident, "input")) == len(_groups(ident, "output")) == 1
    assert not _groups(ident, "eqn")
    (e,) = _groups(ident, "edge")
    assert (e.get("data-src"), e.get("data-dst"), _title(e)) == ("v_a", "out0", "a:f64[]")
    lit = _parse(ft.make_jaxpr(lambda x: 1.0)(2.0).to_svg())
    assert not _groups(lit, "edge")
    assert _texts(_groups(lit, "output")[0]) == ["out 0", "1.0:f64[]"]
    w = np.arange(6.0).reshape(2, 3)
    closed = ft.make_jaxpr(lambda x: fnp.tanh(w @ x))(np.ones(3))
    root = _parse(closed.to_svg())
    (c,) = _groups(root, "const")
    assert _texts(c) == ["a:f64[2,3]", "const 0"]
    assert len(_groups(root, "input")) == 1


def test_deterministic() -> None:
    args = _mlp_args()
    a = ft.make_jaxpr(ft.grad(_mlp_loss))(*args).to_svg()
    b = ft.make_jaxpr(ft.grad(_mlp_loss))(*args).to_svg()
    assert a == b
    closed = ft.make_jaxpr(ft.grad(_mlp_loss))(*args)
    assert closed.to_svg(show_dead=False) == closed.to_svg(show_dead=False)
    # Two different drawings on one page do not share marker ids.
    ids_a = {m.get("id") for m in _parse(a).iter(f"{NS}marker")}
    other = ft.make_jaxpr(_mlp_loss)(*args).to_svg()
    assert not ids_a & {m.get("id") for m in _parse(other).iter(f"{NS}marker")}


def test_large_graph_summary() -> None:
    closed = ft.make_jaxpr(ft.grad(_mlp_loss))(*_mlp_args())
    root = _parse(closed.to_svg(max_eqns=10))
    (s,) = _groups(root, "summary")
    text = " ".join(_texts(s))
    assert f"jaxpr: {len(closed.eqns)} equations" in text and "max_eqns=10" in text
    assert "- dot_general x 5" in text
    assert not _groups(root, "eqn") and not _groups(root, "edge")
    n_live = len(dce_jaxpr(closed.jaxpr).eqns)
    drawn = _parse(closed.to_svg(show_dead=False, max_eqns=n_live))
    assert len(_groups(drawn, "eqn")) == n_live


def test_draw_and_bad_arguments() -> None:
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(1.0)
    pic = closed.draw(show_dead=False)
    assert pic._repr_svg_() == str(pic) == closed.to_svg(show_dead=False)
    with pytest.raises(TypeError, match="to_svg: show_dead must be True or False, got 'no'"):
        closed.to_svg(show_dead="no")
    with pytest.raises(TypeError, match="to_svg: max_eqns must be an int >= 0, got -1"):
        closed.to_svg(max_eqns=-1)


def test_order_within_layers_removes_crossings() -> None:
    # Program order puts sin(b) before cos(a); the drawing swaps them so that no
    # arrow crosses (inputs and outputs keep their order).
    swap = lambda a, b: (lambda s, c: (c, s))(fnp.sin(b), fnp.cos(a))  # noqa: E731
    closed = ft.make_jaxpr(swap)(np.ones(2), np.ones(2))
    root = _parse(closed.to_svg())
    x = {g.get("id"): _box(g)[0] for g in _groups(root, "node")}
    assert [_texts(g)[0] for g in _groups(root, "eqn")] == ["sin", "cos"]
    assert x["v_a"] < x["v_b"] and x["out0"] < x["out1"]
    assert x["e1"] < x["e0"]  # cos(a) left of sin(b)
