"""Check the built documentation site (``make docs-check``; run after ``make docs``).

    python docs/check_site.py docs/_build/html

Checks that

* every tutorial notebook has a page holding its executed outputs: at least one output
  per code cell that prints or draws something, and no error output;
* a notebook that draws with matplotlib shows at least one image on its page;
* every ``<img>`` of every page points to an image file that exists and is not empty;
* every public name (``docs/public_api.py``) has its entry (an HTML anchor) in the API
  reference;
* headless Chromium renders the front page and chapter 08 (the regression plot):
  the screenshots go to ``docs/_build/screenshots/`` and must not be blank.

Prints one line per failure and exits 1 if there is any.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS))
sys.path.insert(0, str(ROOT / "src"))

import public_api  # noqa: E402

# A code cell whose source does one of these is expected to show an output.
DRAWS = re.compile(r"\bplt\.|\.plot\(|\bimshow\(|\bshow\(")


class _Page(HTMLParser):
    """The parts of a built page the checks read: images, anchors, output blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.ids: set[str] = set()
        self.outputs = 0
        self.errors = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        classes = (a.get("class") or "").split()
        if tag == "img" and a.get("src"):
            self.images.append(a["src"] or "")
        if tag == "object" and a.get("data"):
            self.images.append(a["data"] or "")
        if "cell_output" in classes:
            self.outputs += 1
        if "traceback" in classes or ("output" in classes and "error" in classes):
            self.errors += 1


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _chapters() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def check_notebooks(site: Path) -> list[str]:
    problems = []
    for nb_path in _chapters():
        page_path = site / "notebooks" / f"{nb_path.stem}.html"
        if not page_path.exists():
            problems.append(f"{nb_path.name}: no page {page_path}")
            continue
        page = _parse(page_path)
        cells = [c for c in json.loads(nb_path.read_text())["cells"] if c["cell_type"] == "code"]
        sources = ["".join(c["source"]) for c in cells]
        printing = [s for s in sources if "print(" in s or DRAWS.search(s)]
        if page.outputs < max(1, len(printing)):
            problems.append(
                f"{page_path.name}: {page.outputs} output blocks, but {len(printing)} code "
                "cells print or draw: the notebook was not executed"
            )
        if page.errors:
            problems.append(f"{page_path.name}: {page.errors} error outputs")
        if any(DRAWS.search(s) for s in sources) and "matplotlib" in "".join(sources):
            if not [i for i in page.images if not i.startswith("_static")]:
                problems.append(f"{page_path.name}: the notebook draws, the page has no image")
    return problems


def check_images(site: Path) -> list[str]:
    problems = []
    pages = sorted(site.rglob("*.html"))
    for page_path in pages:
        for src in _parse(page_path).images:
            url = urlparse(html.unescape(src))
            if url.scheme in ("data", "http", "https"):
                continue
            target = (page_path.parent / unquote(url.path)).resolve()
            if not target.is_file() or target.stat().st_size == 0:
                problems.append(f"{page_path.relative_to(site)}: image {src} is missing or empty")
    if not pages:
        problems.append(f"no HTML pages under {site}")
    return problems


def check_api(site: Path) -> list[str]:
    problems = []
    for module in public_api.modules():
        page_path = site / "api" / f"{module.__name__}.html"
        if not page_path.exists():
            problems.append(f"API reference: no page for {module.__name__}")
            continue
        ids = _parse(page_path).ids
        for name in public_api.public_names(module):
            if f"{module.__name__}.{name}" not in ids:
                problems.append(f"API reference: no entry for {module.__name__}.{name}")
    return problems


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _blank(png: Path) -> str | None:
    """Why the screenshot ``png`` looks blank, or None if it shows something."""
    from PIL import Image

    if not png.exists() or png.stat().st_size < 10_000:
        return f"{png} is missing or smaller than 10 kB"
    with Image.open(png) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1 << 16)
    if colours is not None and len(colours) < 16:
        return f"{png} has only {len(colours)} colours"
    return None


def screenshots(site: Path, out: Path) -> list[str]:
    browser = _chromium()
    if browser is None:
        return ["no chromium to take the screenshots (Debian: apt-get install chromium)"]
    out.mkdir(parents=True, exist_ok=True)
    shots = [
        ("index.png", site / "index.html", 1280, 1600),
        ("08_linear_regression.png", site / "notebooks" / "08_linear_regression.html", 1280, 6000),
    ]
    problems = []
    for name, page, width, height in shots:
        if not page.exists():
            problems.append(f"screenshot {name}: no page {page}")
            continue
        png = out / name
        png.unlink(missing_ok=True)
        with tempfile.TemporaryDirectory() as profile:
            cmd = [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={png}",
                page.as_uri(),
            ]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if run.returncode != 0:
            problems.append(f"screenshot {name}: chromium failed: {run.stderr.strip()[-500:]}")
            continue
        why = _blank(png)
        if why:
            problems.append(f"screenshot {name}: {why}")
        else:
            print(f"check_site: screenshot {png}")
    return problems


def main(argv: list[str]) -> int:
    site = Path(argv[1] if len(argv) > 1 else DOCS / "_build" / "html").resolve()
    if not (site / "index.html").exists():
        print(f"check_site: no site at {site}; run make docs first")
        return 1
    problems = check_notebooks(site) + check_images(site) + check_api(site)
    problems += screenshots(site, site.parent / "screenshots")
    for p in problems:
        print(f"check_site: {p}")
    n_pages = len(_chapters())
    if problems:
        print(f"check_site: {len(problems)} problems")
        return 1
    print(f"check_site: ok ({n_pages} notebook pages, API entries and images checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
