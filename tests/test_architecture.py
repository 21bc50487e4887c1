"""The package's layering, read from its own source.

Every import in ``src/functrace`` (top level or inside a function) is an edge of the
module graph. The graph has no cycle, and no edge goes from a lower layer to a higher
one (``src/functrace/README.md``, "Layers"). Imports under ``if TYPE_CHECKING:`` do not
run and do not count. Importing a submodule (``from functrace.lax import shapes``) is
an edge to that submodule, not to its package's ``__init__``; importing a name the
package ``__init__`` defines (``from functrace.lax import add``) is an edge to the
package.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "functrace"

# Lowest first. A module may import modules of its own layer (without a cycle) and of
# lower layers only. Patterns are fnmatch patterns over dotted module names.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "leaf",
        (
            "functrace.errors",
            "functrace.dtypes",
            "functrace.tree_util",
            "functrace._tree*",
            "functrace._debug",
            "functrace._graph_svg",
            "functrace._buffers",
            "functrace._torch_hints",
        ),
    ),
    ("core", ("functrace.core",)),
    ("ir", ("functrace.ir",)),
    ("interpreters", ("functrace.interpreters", "functrace.interpreters.*")),
    ("array", ("functrace._array", "functrace._prng")),
    ("lax", ("functrace.lax", "functrace.lax.*")),
    ("numpy", ("functrace.numpy", "functrace.numpy.*")),
    (
        "library",
        (
            "functrace.custom_derivatives",
            "functrace.custom_derivatives.*",
            "functrace.custom_batching",
            "functrace.sharding",
            "functrace.profiler",
            "functrace._custom*",
            "functrace.api",
            "functrace.api.*",
            "functrace._api*",
            "functrace.testing",
            "functrace.test_util",
            "functrace.flatten_util",
            "functrace.ops",
            "functrace.tree",
            "functrace.io",
            "functrace.io.*",
            "functrace._io*",
            "functrace.data",
            "functrace.distributed",
            "functrace.distributed.*",
            "functrace.optim",
            "functrace._leafmap",
            "functrace.nn",
            "functrace.nn.*",
            "functrace.random",
            "functrace.random.*",
            "functrace.scipy",
            "functrace.scipy.*",
            "functrace.example_libraries",
            "functrace.example_libraries.*",
            "functrace._config",
            "functrace._config_options",
            "functrace.debug",
            "functrace.ad_checkpoint",
            "functrace.experimental",
            "functrace.experimental.*",
            "functrace.extend",
            "functrace.extend.*",
            "functrace.typing",
            "functrace.image",
        ),
    ),
    ("jit", ("functrace.jit", "functrace.jit.*")),
    ("top", ("functrace", "functrace.__main__", "functrace._demo", "functrace._examples*")),
]


def _modules() -> dict[str, Path]:
    mods = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = p
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                skip.update(id(n) for n in ast.walk(sub))
    return skip


def import_graph() -> dict[str, set[str]]:
    """module -> the functrace modules it imports anywhere in its source."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_nodes(tree)
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                for a in node.names:
                    sub = f"{origin}.{a.name}"
                    targets.append(sub if sub in mods else origin)
            for t in targets:
                while t and t not in mods:  # a name inside a module -> that module
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return graph


def layer_of(mod: str) -> int:
    for i, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(mod, pat) for pat in patterns):
            return i
    raise AssertionError(
        f"module {mod} has no layer: add it to LAYERS in tests/test_architecture.py "
        "and to the layer drawing in src/functrace/README.md"
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def test_every_module_has_a_layer() -> None:
    for mod in _modules():
        layer_of(mod)


def test_no_import_cycle() -> None:
    graph = import_graph()
    cycles = _cycles(graph)
    detail = []
    for comp in cycles:
        members = set(comp)
        edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a] & members)]
        detail.append(", ".join(comp) + "\n    " + "\n    ".join(edges))
    assert not cycles, "import cycles (function-local imports count):\n" + "\n".join(detail)


def test_imports_go_down_the_layers() -> None:
    graph = import_graph()
    upward = [
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if layer_of(b) > layer_of(a)
    ]
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


@pytest.mark.parametrize("limit", [900])
def test_no_source_file_over_the_limit(limit: int) -> None:
    sizes = {p: len(p.read_text().splitlines()) for p in PKG.rglob("*.py")}
    big = sorted(f"{p.relative_to(SRC)}: {n} lines" for p, n in sizes.items() if n > limit)
    assert not big, f"files over {limit} lines (split them by topic):\n" + "\n".join(big)
    assert sizes[PKG / "tree_util.py"] <= 700, "tree_util.py holds the core pytree API only"


def test_the_checker_sees_function_local_imports(tmp_path: Path) -> None:
    # The graph counts an import inside a function body, and ignores TYPE_CHECKING.
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from functrace import jit\n"
        "def f():\n    from functrace.lax import shapes\n"
    )
    skip = _type_checking_nodes(tree)
    seen = [
        n.module
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and id(n) not in skip and n.module != "typing"
    ]
    assert seen == ["functrace.lax"]
    graph = import_graph()
    assert "functrace.core" in graph["functrace.ir"]
