"""The activity boundary holds no dead code: the workers register exactly the activities the workflows call.

Workflow side: every ``workflow.execute_activity`` / ``start_activity`` call in
``workflows/``, and every call of the typed helper ``calls.run_activity`` (whose own
``execute_activity`` call passes its caller's name on), its first argument read from the source. The name may be a
string literal or a constant (``NAME = "..."`` at module or class level) in
``workflows/`` or ``lazarus/models/``. Worker side: every ``@activity.defn`` of
the classes the worker host registers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workers.host import ACTIVITY_CLASSES

REPO = Path(__file__).resolve().parents[2]
CALLS = {"execute_activity", "start_activity", "execute_local_activity", "start_local_activity", "run_activity"}
HELPER = "run_activity"  # workflows/calls.py: performs execute_activity for the name its caller gives


def _trees(*folders: str) -> Iterator[tuple[Path, ast.Module]]:
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            yield path, ast.parse(path.read_text(), str(path))


def _string_constants() -> dict[str, str]:
    """Every ``NAME = "text"`` at module or class level in workflows/ and lazarus/models/."""
    found: dict[str, str] = {}
    for _, tree in _trees("workflows", "lazarus/models"):
        bodies = [tree.body] + [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
        for stmt in (s for body in bodies for s in body):
            value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                found.update({t.id: value.value for t in targets if isinstance(t, ast.Name)})
    return found


def _name_of(arg: ast.expr, constants: dict[str, str]) -> str | None:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    key = arg.id if isinstance(arg, ast.Name) else arg.attr if isinstance(arg, ast.Attribute) else None
    return constants.get(key) if key else None


def called_by_workflows() -> set[str]:
    constants, names = _string_constants(), set()
    for path, tree in _trees("workflows"):
        helpers = [f for f in ast.walk(tree) if isinstance(f, ast.AsyncFunctionDef) and f.name == HELPER]
        passed_on = {id(n) for f in helpers for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _called(node) in CALLS and id(node) not in passed_on:
                name = _name_of(node.args[0], constants) if node.args else None
                assert name, f"{path.name}:{node.lineno}: cannot read the activity name of this call"
                names.add(name)
    return names


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _definition_name(fn: Any) -> str:
    return fn.__temporal_activity_definition.name


def registered_by_workers() -> set[str]:
    return {_definition_name(fn) for cls in ACTIVITY_CLASSES for fn in cls.__new__(cls).all()}


def test_the_workers_register_exactly_the_activities_the_workflows_call() -> None:
    registered, called = registered_by_workers(), called_by_workflows()
    assert registered - called == set(), "registered but never called by a workflow: delete them"
    assert called - registered == set(), "called by a workflow but served by no worker"


def test_every_activity_a_class_defines_is_in_what_it_registers() -> None:
    for cls in ACTIVITY_CLASSES:
        defined = {_definition_name(fn) for fn in vars(cls).values() if hasattr(fn, "__temporal_activity_definition")}
        assert defined == {_definition_name(fn) for fn in cls.__new__(cls).all()}, cls.__name__
