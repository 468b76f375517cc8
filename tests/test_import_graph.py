"""The import graph of the project's own packages, read from the source with `ast`.

Three rules hold for every module of `engine/`, `console/` and `kafka_rules/`:
- the packages import one way: console -> engine -> kafka_rules (kafka_rules/__init__.py);
- no import circle, counting imports inside functions too (a deferred import hides a circle
  from Python, not from the reader);
- no module imports another module's leading-underscore name: a private name is private to its
  module, and a helper two modules share belongs in a public module they both import.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "console", "kafka_rules")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def project_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def absolute(node: ast.ImportFrom, name: str, path: Path) -> str:
    """The module an ImportFrom names, relative imports resolved against `name`'s package."""
    if not node.level:
        return node.module or ""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str | None]]:
    """(module imported, name imported from it or None) for every import statement of `path`."""
    return _imports_of(name, path, frozenset(modules))


@functools.cache
def _imports_of(name: str, path: Path, modules: frozenset[str]) -> list[tuple[str, str | None]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = absolute(node, name, path)
            for alias in node.names:
                # `from package import module` imports the module, not a name of the package.
                submodule = f"{source}.{alias.name}"
                found.append((submodule, None) if submodule in modules else (source, alias.name))
    return found


def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: {target for target, _ in imports(name, path, modules) if target in modules and target != name}
            for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_the_graph_is_read():
    edges = graph()
    assert "engine.protocol.dispatch" in edges["engine.protocol.listener"]
    assert "console.clusters.models" in edges["console.clusters.services"]


def test_no_import_circle():
    assert circles(graph()) == []


def test_no_module_imports_another_modules_private_name():
    modules = project_modules()
    private = sorted(f"{name} imports {imported} from {source}"
                     for name, path in modules.items()
                     for source, imported in imports(name, path, modules)
                     if imported and imported.startswith("_") and not imported.startswith("__")
                     and source in modules and source != name)
    assert private == []


def test_the_packages_import_one_way():
    """console -> engine -> kafka_rules, and console -> kafka_rules: never back."""
    upward = {"engine": ("console",), "kafka_rules": ("engine", "console")}
    back = sorted(f"{name} imports {target}" for name, targets in graph().items()
                  for target in targets if target.startswith(upward.get(name.split(".")[0], ())))
    assert back == []


def test_the_circle_finder_sees_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
