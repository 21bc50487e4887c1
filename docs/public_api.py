"""The public names of functrace, as the API reference and its tests see them.

One rule decides what is public, so that new names appear in the reference (and in the
docstring test) without edits:

* the modules are ``MODULES`` plus every public submodule found under ``PACKAGES``
  (``functrace.scipy.*``, ``functrace.example_libraries.*``, ...); a module listed here
  that does not import yet is skipped;
* a module's public names are its ``__all__`` when it defines one, else every name
  not starting with ``_``;
* of those, a name is documented when it is a function or class defined in functrace,
  an instance of a class defined in functrace (``functrace.config``,
  ``functrace.numpy.r_``), or a type alias listed in ``__all__``
  (``tree_util.KeyPath``, ``nn.initializers.Initializer``); its docstring is the
  object's own (an instance's is its class's; an alias's is the string literal that
  follows its assignment in the source, found through the imports that re-export it).

Left out, by that rule: submodules (each listed module has its own page), names
re-exported from NumPy, the standard library or ``typing`` (``functrace.numpy.float32``,
``ndarray``, ``dtype``), plain constants (``pi``, ``inf``, ``nan``, ``newaxis``, dicts),
and the ``Primitive`` objects (``lax.add_p``, ...): the IR's operation symbols, whose
meaning is documented by the function that binds them (``lax.add``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import types
from typing import Any

MODULES = [
    "functrace",
    "functrace.numpy",
    "functrace.numpy.linalg",
    "functrace.numpy.fft",
    "functrace.lax",
    "functrace.nn",
    "functrace.nn.functional",
    "functrace.nn.initializers",
    "functrace.optim",
    "functrace.random",
    "functrace.tree_util",
    "functrace.tree",
    "functrace.flatten_util",
    "functrace.ops",
    "functrace.io",
    "functrace.data",
    "functrace.debug",
    "functrace.ad_checkpoint",
    "functrace.custom_batching",
    "functrace.custom_derivatives",
    "functrace.sharding",
    "functrace.profiler",
    "functrace.distributed",
    "functrace.test_util",
    "functrace.testing",
    "functrace.scipy",
    "functrace.example_libraries",
    "functrace.experimental",
    "functrace.experimental.sparse",
    "functrace.experimental.multihost_utils",
    "functrace.extend.core",
    "functrace.typing",
    "functrace.image",
    "functrace.dtypes",
]
# Packages whose public submodules are documented too, found when the reference is built.
PACKAGES = [
    "functrace.scipy",
    "functrace.example_libraries",
    "functrace.scipy.stats",
    "functrace.scipy.sparse",
    "functrace.scipy.cluster",
    "functrace.scipy.spatial",
    "functrace.experimental",
    "functrace.experimental.compilation_cache",
]


def modules() -> list[types.ModuleType]:
    """Every documented module, imported, in a stable order (listed ones first)."""
    names = list(MODULES)
    for pkg_name in PACKAGES:
        try:
            pkg = importlib.import_module(pkg_name)
        except ImportError:
            continue
        for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            full = f"{pkg_name}.{info.name}"
            if not info.name.startswith("_") and full not in names:
                names.append(full)
    found = [importlib.import_module(name) for name in MODULES]  # listed: must import
    for name in names[len(MODULES) :]:
        try:
            found.append(importlib.import_module(name))
        except ImportError:  # a submodule needing an optional dependency
            continue
    return found


def _is_functrace(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "functrace"


def _is_primitive(obj: Any) -> bool:
    from functrace.core import Primitive

    return isinstance(obj, Primitive)


def _is_alias(obj: Any) -> bool:
    """A type alias: ``typing.Any``, ``Callable[..., Any]``, ``tuple[Any, ...]``."""
    return obj is Any or isinstance(obj, types.GenericAlias) or type(obj).__module__ == "typing"


def kind(obj: Any, exported: bool = False) -> str | None:
    """``"function"``, ``"class"``, ``"object"`` or ``"alias"`` for a documented name,
    else None; an alias counts only when ``exported`` (listed in ``__all__``)."""
    if _is_alias(obj):
        return "alias" if exported else None
    if isinstance(obj, types.ModuleType):
        return None
    if inspect.isclass(obj):
        return "class" if _is_functrace(obj) else None
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return "function" if _is_functrace(obj) else None
    if _is_primitive(obj):
        return None
    if _is_functrace(type(obj)):
        return "object"
    if callable(obj) and _is_functrace(obj):
        return "function"
    return None


def public_names(module: types.ModuleType) -> list[str]:
    """The documented names of ``module``, in ``__all__`` order or sorted."""
    exported = getattr(module, "__all__", None)
    names = (
        exported
        if exported is not None
        else sorted(n for n in vars(module) if not n.startswith("_"))
    )
    return [n for n in names if kind(getattr(module, n), exported is not None) is not None]


def name_kind(module: types.ModuleType, name: str) -> str | None:
    """``kind`` of ``module.name`` as ``public_names`` decides it."""
    return kind(getattr(module, name), hasattr(module, "__all__"))


def _source_tree(module_name: str) -> ast.Module | None:
    spec = importlib.util.find_spec(module_name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    with open(spec.origin, encoding="utf-8") as f:
        return ast.parse(f.read())


def alias_docstring(module_name: str, name: str, _depth: int = 0) -> str:
    """The string literal after ``name = ...`` in ``module_name``'s source, following the
    ``from ... import`` statements that re-export ``name``; ``""`` if there is none."""
    tree = _source_tree(module_name) if _depth < 5 else None
    if tree is None:
        return ""
    body = tree.body
    for i, node in enumerate(body):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            nxt = body[i + 1] if i + 1 < len(body) else None
            if (
                isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                return inspect.cleandoc(nxt.value.value)
            return ""
    package = module_name if _is_package(module_name) else module_name.rpartition(".")[0]
    for node in body:
        if isinstance(node, ast.ImportFrom) and any(a.name in (name, "*") for a in node.names):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            source = node.module or ""
            if node.level:
                source = f"{base}.{source}" if source else base
            found = alias_docstring(source, name, _depth + 1)
            if found:
                return found
    return ""


def _is_package(module_name: str) -> bool:
    spec = importlib.util.find_spec(module_name)
    return bool(spec and spec.submodule_search_locations is not None)


def docstring(obj: Any, module: types.ModuleType | None = None, name: str = "") -> str:
    """The object's own docstring (an instance's is its class's), or ``""``; an alias's
    (``module`` and ``name`` given) is ``alias_docstring``'s.

    Inherited docstrings do not count: a class or function needs its own.
    """
    if module is not None and name and name_kind(module, name) == "alias":
        return alias_docstring(module.__name__, name)
    doc = type(obj).__doc__ if kind(obj) == "object" else obj.__doc__
    return inspect.cleandoc(doc) if isinstance(doc, str) else ""
