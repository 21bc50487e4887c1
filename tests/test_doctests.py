"""Every example in the docstrings of ``src/functrace`` runs and prints what it shows
(so the examples the API reference displays cannot drift from the code)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import functrace

_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    names = ["functrace"]
    for info in pkgutil.walk_packages(functrace.__path__, "functrace."):
        if info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=_FLAGS)
    failures = []
    for test in finder.find(module, name):
        result = runner.run(test, out=lambda text: failures.append(text))
        if result.failed and not failures:
            failures.append(f"{test.name}: {result.failed} failed")
    assert not failures, "\n".join(failures)
