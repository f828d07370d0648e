"""The architecture holds: clean layers, no import cycles, and a code map that names the real tree.

Layers (every import counts, also those inside functions or under ``TYPE_CHECKING``):
- ``workflows`` imports only ``workflows``, ``lazarus.models``, ``lazarus.errors``, the SDK and the
  standard library: workflow code stays deterministic and free of I/O;
- nothing under ``lazarus`` but the CLI, and nothing under ``activities``, imports ``workflows`` or
  ``workers``: clients address workflows by the names in ``lazarus.models.names``;
- nothing imports ``lazarus.cli`` but the CLI itself;
- there is no import cycle between the project's modules.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lazarus", "workflows", "activities", "workers")
WORKFLOW_MAY_IMPORT = ("workflows", "lazarus.models", "lazarus.errors")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The project modules ``name`` imports, resolved to the longest known module name."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                package = package[: len(package) - node.level + 1]
                base = ".".join([*package, base] if base else package)
            candidates = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                names.add(candidate)
    return names


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_workflow_code_imports_only_workflows_models_and_errors():
    wrong = [
        (m, i)
        for m, deps in GRAPH.items()
        if _within(m, ("workflows",))
        for i in sorted(deps)
        if not _within(i, WORKFLOW_MAY_IMPORT)
    ]
    assert wrong == []


def test_only_the_cli_imports_workflows_and_workers():
    wrong = [
        (m, i)
        for m, deps in GRAPH.items()
        if _within(m, ("lazarus", "activities")) and not _within(m, ("lazarus.cli",))
        for i in sorted(deps)
        if _within(i, ("workflows", "workers"))
    ]
    assert wrong == []


def test_nothing_imports_the_cli_but_the_cli():
    wrong = [
        (m, i)
        for m, deps in GRAPH.items()
        if not _within(m, ("lazarus.cli",))
        for i in sorted(deps)
        if _within(i, ("lazarus.cli",))
    ]
    assert wrong == []


def test_there_is_no_import_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in GRAPH[node]:
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    assert cycles == []


# ---- the code map in docs/architecture.md ---------------------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _code_map_paths() -> list[str]:
    text = ARCHITECTURE.read_text()
    section = text[text.index("## Code map") :]
    section = section[: section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [p for row in rows for p in re.findall(r"`([\w./-]+)`", row.split(" | ")[0])]


@pytest.mark.parametrize("path", _code_map_paths())
def test_every_path_in_the_code_map_exists(path):
    assert (ROOT / path).exists(), f"docs/architecture.md names {path}, which is not in the tree"


def _must_be_named() -> list[str]:
    wanted = [
        str(p.relative_to(ROOT))
        for d in ("workflows", "activities", "workers")
        for p in sorted((ROOT / d).glob("*.py"))
        if p.name != "__init__.py"
    ]
    for child in sorted((ROOT / "lazarus").iterdir()):
        if child.is_dir() and (child / "__init__.py").exists():
            wanted.append(f"lazarus/{child.name}/")
        elif child.suffix == ".py" and child.name != "__init__.py":
            wanted.append(f"lazarus/{child.name}")
    return wanted


def test_the_code_map_names_every_module_and_package():
    named = set(_code_map_paths())
    assert [p for p in _must_be_named() if p not in named] == []
