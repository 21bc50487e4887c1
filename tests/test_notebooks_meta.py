"""Static checks of the tutorial notebooks (executing them is nbmake's job).

Committed with outputs cleared, a Python 3 kernel, a "Try this" section, only the
public API (except chapter 13), and listed in notebooks/README.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
INTERNAL = re.compile(
    r"^\s*(from|import)\s+functrace\.(core|interpreters|ir|jit|lax\.\w+)\b", re.MULTILINE
)
OTHER_FRAMEWORKS = re.compile(r"^\s*(from|import)\s+(torch|jax|micrograd)\b", re.MULTILINE)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def test_chapters_exist() -> None:
    assert CHAPTERS, f"no numbered notebooks in {NOTEBOOKS}"
    numbers = [p.name[:2] for p in CHAPTERS]
    assert len(numbers) == len(set(numbers)), f"two notebooks share a number: {numbers}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_outputs_cleared(path: Path) -> None:
    nb = _load(path)
    assert nb.get("nbformat") == 4
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        assert cell.get("outputs") == [], f"{path.name}: cell {i} has outputs; clear them"
        assert cell.get("execution_count") is None, f"{path.name}: cell {i} has a count"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_kernel_and_structure(path: Path) -> None:
    nb = _load(path)
    assert nb["metadata"]["kernelspec"]["name"] == "python3", path.name
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    assert markdown and markdown[0].lstrip().startswith("# "), f"{path.name}: no title cell"
    assert any("## Try this" in m for m in markdown), f"{path.name}: no 'Try this' section"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_public_api_only(path: Path) -> None:
    code = "\n".join(_code(_load(path)))
    assert not OTHER_FRAMEWORKS.search(code), f"{path.name}: imports another framework"
    if not path.name.startswith("13_"):  # chapter 13 defines a primitive: internals allowed
        match = INTERNAL.search(code)
        assert match is None, f"{path.name}: imports an internal module: {match.group(0)!r}"


def test_readme_lists_every_chapter() -> None:
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    for path in CHAPTERS:
        assert f"]({path.name})" in readme, f"notebooks/README.md does not link {path.name}"
    for n in range(1, len(CHAPTERS) + 1):
        assert re.search(rf"^\| {n:02d} \|", readme, re.MULTILINE), f"README: no row {n:02d}"
