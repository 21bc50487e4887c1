"""Sphinx configuration of functrace's documentation site (``make docs``).

The site's pages come from the repository: the README is the index, the tutorial
notebooks (every ``notebooks/[0-9][0-9]_*.ipynb``, executed at build time), the design
notes, and an API reference generated from the docstrings of every public name
(``docs/public_api.py`` decides what is public). ``_sync_sources`` copies the pages
into this folder (git-ignored) before Sphinx reads it, so that the README's relative
links resolve as they do on the repository.
"""

from __future__ import annotations

import ast
import hashlib
import re
import shutil
import sys
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS))
sys.path.insert(0, str(ROOT / "src"))

import public_api  # noqa: E402

# Files of the repository that become pages, at the same relative paths.
REPO_PAGES = ["src/functrace/README.md", "src/functrace/jit/README.md"]


def _write(path: Path, text: str) -> None:
    """Write ``text`` only when it changed, so Sphinx's incremental build keeps working."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _chapters() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _api_pages() -> list[str]:
    """One reStructuredText page per module: its docstring, then every public name."""
    pages = []
    for module in public_api.modules():
        name = module.__name__
        lines = [name, "=" * len(name), "", f".. automodule:: {name}", ""]
        for attr in public_api.public_names(module):
            kind = public_api.name_kind(module, attr)
            if kind == "class":
                lines += [f".. autoclass:: {name}.{attr}", "   :members:", ""]
            elif kind == "function":
                lines += [f".. autofunction:: {name}.{attr}", ""]
            else:
                # An instance or a type alias: autodoc would show the class's (or typing's)
                # docstring, so the entry is written with public_api's docstring.
                doc = public_api.docstring(getattr(module, attr), module, attr)
                lines += [f".. py:data:: {attr}", f"   :module: {name}", ""]
                lines += [f"   {line}".rstrip() for line in doc.splitlines()] + [""]
        _write(DOCS / "api" / f"{name}.rst", "\n".join(lines))
        pages.append(name)
    index = ["API reference", "=============", ""]
    index += ["Every public name of every module, with its docstring.", ""]
    index += [".. toctree::", "   :maxdepth: 1", ""] + [f"   {p}" for p in pages]
    _write(DOCS / "api" / "index.rst", "\n".join(index) + "\n")
    return pages


def _sync_sources() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    toc = [
        "",
        "```{toctree}",
        ":hidden:",
        ":maxdepth: 1",
        "",
        "concepts",
        "notebooks/README",
        "src/functrace/README",
        "src/functrace/jit/README",
        "api/index",
        "```",
        "",
    ]
    _write(DOCS / "index.md", readme + "\n".join(toc))
    tutorials = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    chapters = _chapters()
    tutorials += "\n```{toctree}\n:hidden:\n\n" + "".join(p.stem + "\n" for p in chapters)
    tutorials += "```\n"
    _write(DOCS / "notebooks" / "README.md", tutorials)
    wanted = {p.name for p in chapters}
    for old in (DOCS / "notebooks").glob("*.ipynb"):
        if old.name not in wanted:
            old.unlink()
    for path in chapters:
        _write(DOCS / "notebooks" / path.name, path.read_text(encoding="utf-8"))
    for rel in REPO_PAGES:
        _write(DOCS / rel, (ROOT / rel).read_text(encoding="utf-8"))
    api = DOCS / "api"
    if api.exists():
        keep = {f"{p}.rst" for p in _api_pages()} | {"index.rst"}
        for old in api.glob("*.rst"):
            if old.name not in keep:
                old.unlink()
    else:
        _api_pages()


_sync_sources()

project = "functrace"
author = "functrace contributors"
release = re.search(
    r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE
).group(1)

# napoleon reads the Google-style sections (Args:, Returns:, Example:) some modules use.
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
exclude_patterns = [
    "_build",
    "README.md",
    "public_api.py",
    "check_site.py",
    "**/.ipynb_checkpoints",
]

# Docstrings are plain text whose `name` marks code, as in Markdown.
default_role = "code"
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

myst_heading_anchors = 3
# Notebooks write math as $...$ and $$...$$ (rendered by MathJax in the browser).
myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]


def _library_key() -> str:
    """A hash of functrace's code (docstrings and comments left out) and data files.

    jupyter-cache keys a notebook's results on its cells only; the cache lives in a
    folder named after this hash, so a change to the library's code executes every
    notebook again, while a change to prose (docstrings, READMEs) reuses the results.
    """
    digest = hashlib.sha256()
    for path in sorted((ROOT / "src" / "functrace").rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        digest.update(str(path.relative_to(ROOT)).encode())
        if path.suffix == ".py":
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                body = getattr(node, "body", None)
                if (
                    isinstance(
                        node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
                    )
                    and body
                    and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)
                ):
                    node.body = body[1:] or [ast.Pass()]
            digest.update(ast.dump(tree).encode())
        elif path.suffix not in (".md", ".orig"):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _execution_cache() -> str:
    """This library version's jupyter-cache folder; other versions' folders are removed."""
    base = DOCS / "_build" / "jupyter_cache"
    path = base / _library_key()
    if base.exists():
        for old in base.iterdir():
            if old != path:
                shutil.rmtree(old, ignore_errors=True)
    return str(path)


# Every notebook runs at build time; results are cached by the notebook's cells and the
# library's code (jupyter-cache, see _library_key), so a rebuild executes only what
# changed. A clean clone runs them all.
nb_execution_mode = "cache"
nb_execution_cache_path = _execution_cache()
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_in_temp = True
nb_merge_streams = True

html_theme = "furo"
html_title = f"functrace {release}"
html_static_path: list[str] = []


def _render_graphviz_source(renderer_cls: type) -> None:
    """Show a ``text/vnd.graphviz`` output (a jaxpr drawing's DOT source) as a DOT code
    block. myst-nb renders every mime type of a bundle while parsing and has no renderer
    for this one; the HTML page still shows the bundle's best type (an SVG drawing when
    the bundle has one), and this block only when nothing better is there."""
    from docutils import nodes

    original = renderer_cls.render_mime_type
    if getattr(original, "_functrace_dot", False):
        return

    def render_mime_type(self: Any, data: Any) -> list[Any]:
        if data.mime_type == "text/vnd.graphviz":
            block = nodes.literal_block(data.string, data.string, language="dot")
            return [block]
        return original(self, data)

    render_mime_type._functrace_dot = True  # type: ignore[attr-defined]
    renderer_cls.render_mime_type = render_mime_type


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.core.render import NbElementRenderer

    _render_graphviz_source(NbElementRenderer)
    return {"parallel_read_safe": True}
