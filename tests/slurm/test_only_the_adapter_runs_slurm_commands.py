"""The Slurm adapter is the only code that runs Slurm commands; the dev stack's cluster bring-up is the one exception.

Everything else (the CLI's ``submit``/``watch``, the demo, the activities,
the telemetry loop) goes through :class:`lazarus.slurm.client.SlurmClient`,
so every command is validated, typed and verified in one place. The rule is
checked on the source: no other product module starts a process at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("lazarus", "activities", "workers", "workflows")
MAY_START_PROCESSES = ("lazarus/slurm/", "lazarus/devstack/")
PROCESS_STARTERS = {
    ("subprocess", "run"),
    ("subprocess", "Popen"),
    ("subprocess", "call"),
    ("subprocess", "check_call"),
    ("subprocess", "check_output"),
    ("subprocess", "getoutput"),
    ("subprocess", "getstatusoutput"),
    ("os", "system"),
    ("os", "popen"),
    ("asyncio", "create_subprocess_exec"),
    ("asyncio", "create_subprocess_shell"),
}


def process_starts(path: Path) -> list[str]:
    """``module.function`` calls in ``path`` that start a process (also ``from module import function``)."""
    tree = ast.parse(path.read_text(), str(path))
    imported = {
        alias.asname or alias.name: (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            target = (func.value.id, func.attr)
        elif isinstance(func, ast.Name) and func.id in imported:
            target = imported[func.id]
        else:
            continue
        if target in PROCESS_STARTERS or (target[0] == "os" and target[1].startswith(("exec", "spawn"))):
            found.append(f"{path.relative_to(REPO)}:{node.lineno} {'.'.join(target)}")
    return found


def test_no_product_module_outside_the_adapter_and_the_dev_stack_starts_a_process() -> None:
    offenders = [
        start
        for root in PRODUCT
        for path in sorted((REPO / root).rglob("*.py"))
        if not str(path.relative_to(REPO)).startswith(MAY_START_PROCESSES)
        for start in process_starts(path)
    ]
    assert offenders == []


def test_the_check_sees_the_adapters_own_process_start() -> None:
    assert process_starts(REPO / "lazarus/slurm/transport.py") != []
