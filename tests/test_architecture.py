"""The house rules of the imports, read from the source (every import statement, those
inside functions too; those under `if TYPE_CHECKING:` are for the type checker only):

- no import cycles between layerpath's modules, lazy imports counted;
- the floor (layerpath/kit/: vocabulary and pixel kit) imports nothing of the rooms
  above it, and the tools nothing of the engine, the GUI or the plug-ins;
- the engine uses the tools through the catalogue (tools/registry.py), their common
  interface (tools/base.py) and the services they share (weights, device, endpoint),
  never a tool family's own module: what a family offers the engine besides its tools
  is a service the catalogue binds by name (tools.registry.service);
- every package folder is one the install ships (pyproject.toml's packages).

The package maps its top-level folders to sub-packages (pyproject.toml's package-dir),
which the import graph libraries (grimp, import-linter) cannot follow: the walk is a
few lines of `ast` here.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the package it is
FOLDERS = {
    "layerpath": "layerpath",
    "engine": "layerpath.engine",
    "tools": "layerpath.tools",
    "settings": "layerpath.settings",
    "gui": "layerpath.gui",
    "plugin": "layerpath.plugin",
    "benchmarks": "layerpath.benchmarks",
}
#: what the engine may use of the tools: the catalogue, the tools' common interface,
#: and the services tools and engine share (weights on disk, the device, the endpoint)
TOOL_SERVICES = {"registry", "base", "models", "device", "endpoint"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for inner in ast.walk(node))
    return skipped


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The layerpath modules `name` imports: `from package import module` names the
    module, `from module import thing` the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            submodules = {f"{base}.{alias.name}" for alias in node.names} & set(modules)
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _short(module: str) -> str:
    return module.removeprefix("layerpath.")


def test_no_module_imports_itself_back_through_others() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """(The rule above would pass on a finder that finds nothing.)"""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_the_floor_and_the_tools_import_nothing_from_the_rooms_above() -> None:
    above_floor = ("layerpath.engine", "layerpath.tools", "layerpath.gui", "layerpath.plugin")
    above_tools = ("layerpath.engine", "layerpath.gui", "layerpath.plugin")
    wrong = [
        f"{_short(name)} -> {_short(used)}"
        for name, uses in _graph().items()
        for used in uses
        if name.startswith("layerpath.kit")
        and used.startswith(above_floor)
        or name.startswith("layerpath.tools")
        and used.startswith(above_tools)
    ]
    assert wrong == []


def test_the_engine_uses_tools_only_through_the_registry_and_their_services() -> None:
    borrowed: dict[str, set[str]] = {}
    for name, uses in _graph().items():
        if not name.startswith("layerpath.engine"):
            continue
        for used in uses:
            family = used.removeprefix("layerpath.tools.")
            if used.startswith("layerpath.tools.") and family not in TOOL_SERVICES:
                borrowed.setdefault(_short(name), set()).add(family)
    assert borrowed == {}
    # (the walk sees a borrowing where there is one)
    assert "layerpath.tools.registry" in _graph()["layerpath.engine.execute.executor"]


def test_every_package_folder_is_shipped() -> None:
    """A sub-package missing from pyproject.toml's list is left out of the wheel, the
    Krita plug-in's install included (setuptools is told the packages by name)."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = set()
    for folder, package in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join([package, *parts]))
    assert found - listed == set()
