"""Every public name has a docstring of its own, and the API reference lists them all.

What is public is decided by ``docs/public_api.py`` (its docstring gives the rule: the
names of ``__all__`` or not starting with ``_``, minus submodules, names re-exported from
NumPy or the standard library, constants and ``Primitive`` objects); the same module
generates the API reference, so every name checked here has an entry there
(``make docs-check`` verifies the built pages).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "docs" / "public_api.py"
_spec = importlib.util.spec_from_file_location("functrace_docs_public_api", _PATH)
assert _spec is not None and _spec.loader is not None
public_api = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = public_api
_spec.loader.exec_module(public_api)

MODULES = public_api.modules()

# The modules the reference must cover (the list); each must import.
REQUIRED = [
    "functrace",
    "functrace.numpy",
    "functrace.numpy.linalg",
    "functrace.lax",
    "functrace.nn",
    "functrace.nn.functional",
    "functrace.nn.initializers",
    "functrace.optim",
    "functrace.tree_util",
    "functrace.tree",
    "functrace.io",
    "functrace.data",
    "functrace.random",
    "functrace.debug",
    "functrace.distributed",
    "functrace.scipy.special",
    "functrace.scipy.stats",
    "functrace.scipy.linalg",
    "functrace.example_libraries.stax",
    "functrace.example_libraries.optimizers",
    "functrace.example_libraries.initializers",
]


def test_required_modules_are_documented() -> None:
    found = {m.__name__ for m in MODULES}
    missing = [name for name in REQUIRED if name not in found]
    assert not missing, f"modules missing from the API reference: {missing}"


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_public_names_have_docstrings(module) -> None:
    names = public_api.public_names(module)
    assert public_api.docstring(module), f"{module.__name__}: the module has no docstring"
    missing = [n for n in names if not public_api.docstring(getattr(module, n), module, n).strip()]
    assert not missing, f"{module.__name__}: public names without a docstring: {missing}"


def test_every_module_has_names() -> None:
    # A package of submodules only (functrace.scipy) may have none of its own.
    empty = [m.__name__ for m in MODULES if not public_api.public_names(m)]
    assert set(empty) <= {
        "functrace.scipy",
        "functrace.scipy.stats",
        "functrace.scipy.sparse",
        "functrace.scipy.cluster",
        "functrace.scipy.spatial",
        "functrace.example_libraries",
        "functrace.experimental.compilation_cache",
    }
    assert sum(len(public_api.public_names(m)) for m in MODULES) > 800


def test_aliases_are_documented() -> None:
    import functrace.example_libraries.initializers as exlib_init
    import functrace.tree_util as tree_util

    assert public_api.name_kind(tree_util, "KeyPath") == "alias"
    assert "key entries" in public_api.docstring(tree_util.KeyPath, tree_util, "KeyPath")
    assert public_api.docstring(exlib_init.Initializer, exlib_init, "Initializer")


def test_config_is_documented() -> None:
    import functrace

    assert "config" in public_api.public_names(functrace)
    assert public_api.docstring(functrace.config)


def test_rule_leaves_out_reexports_and_primitives() -> None:
    import functrace.lax as lax
    import functrace.numpy as fnp

    names = set(public_api.public_names(fnp))
    assert {"sin", "where", "r_"} <= names
    assert not {"ndarray", "dtype", "pi", "newaxis", "linalg"} & names
    assert "float32" in names  # functrace's own scalar type (JAX's), documented
    lax_names = set(public_api.public_names(lax))
    assert "add" in lax_names and "add_p" not in lax_names
