"""The ``workflow.patched`` ids workflow code uses, read from its source (tests/workflows/test_replay.py).

An id is a string literal, a module-level constant (of the module itself or imported into it), or a
variable looping over a tuple of such constants (``for p in DECISION_PATCHES``). Anything else is refused,
so that no patch escapes the check that stored histories replay both of its branches.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

PATCH_CALLS = {"patched", "deprecate_patch"}


def patch_ids_in(package: Path) -> set[str]:
    """Every patch id passed to ``workflow.patched`` / ``workflow.deprecate_patch`` in the package's modules."""
    ids: set[str] = set()
    for source in sorted(package.glob("*.py")):
        tree = ast.parse(source.read_text(), filename=str(source))
        module = importlib.import_module(f"{package.name}.{source.stem}")
        loops = _loop_sources(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PATCH_CALLS:
                ids |= _resolve(node.args[0], module, loops, f"{source.name}:{node.lineno}")
    return ids


def _loop_sources(tree: ast.AST) -> dict[str, ast.expr]:
    """Loop and comprehension variables and what they iterate over."""
    loops: dict[str, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            loops[node.target.id] = node.iter
    return loops


def _resolve(arg: ast.expr, module, loops: dict[str, ast.expr], where: str) -> set[str]:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return {arg.value}
    if isinstance(arg, ast.Name) and isinstance(getattr(module, arg.id, None), str):
        return {getattr(module, arg.id)}
    if isinstance(arg, ast.Name) and arg.id in loops:
        over = loops[arg.id]
        values = getattr(module, over.id, None) if isinstance(over, ast.Name) else None
        if isinstance(values, tuple) and values and all(isinstance(v, str) for v in values):
            return set(values)
    raise AssertionError(f"{where}: cannot tell which patch id is passed to workflow.patched; use a constant")
