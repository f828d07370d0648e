"""Spec: the commands and files in docs/deployment.md work as written.

The search-attribute block is run line by line, with the real `temporal` CLI, against a real
Temporal dev server; the systemd example's configuration loads and its stop timeout covers the
graceful shutdown.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.testing import WorkflowEnvironment

from lazarus.config import load_settings
from lazarus.models.search_attributes import SEARCH_ATTRIBUTES
from tests.helm.chart import REPO

GUIDE = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
TEMPORAL_CLI = Path(sys.executable).parent / "temporal"


def _server_type(cli_type: str) -> int:
    """The server's enum value for a CLI type name: KeywordList -> INDEXED_VALUE_TYPE_KEYWORD_LIST."""
    return IndexedValueType.Value("INDEXED_VALUE_TYPE_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cli_type).upper())


def _block_after(marker: str, language: str) -> str:
    """The first fenced block of ``language`` after ``marker`` in the guide."""
    start = GUIDE.index(marker)
    match = re.compile(rf"```{language}\n(.*?)```", re.DOTALL).search(GUIDE, start)
    assert match is not None, f"no {language} block after {marker!r}"
    return match.group(1)


def _registration_commands() -> list[list[str]]:
    block = _block_after("<!-- register-search-attributes", "bash")
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_the_guide_registers_every_search_attribute_with_its_type() -> None:
    registered = {}
    for argv in _registration_commands():
        if argv[:3] == ["temporal", "operator", "search-attribute"]:
            options = dict(zip(argv[4::2], argv[5::2], strict=False))
            registered[options["--name"]] = options["--type"]
    assert registered == SEARCH_ATTRIBUTES


@pytest.mark.temporal
@pytest.mark.asyncio(loop_scope="session")
async def test_the_registration_block_runs_against_a_real_temporal() -> None:
    env = await WorkflowEnvironment.start_local(dev_server_existing_path=str(TEMPORAL_CLI))
    try:
        cli_env = {**os.environ, "TEMPORAL_ADDRESS": env.client.service_client.config.target_host}
        for argv in _registration_commands():
            proc = subprocess.run(
                [str(TEMPORAL_CLI), *argv[1:]], env=cli_env, capture_output=True, text=True, timeout=60, check=False
            )
            assert proc.returncode == 0, f"{shlex.join(argv)}: {proc.stderr}"
        listed = await env.client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace="recovery")
        )
        assert dict(listed.custom_attributes) == {name: _server_type(t) for name, t in SEARCH_ATTRIBUTES.items()}
    finally:
        await env.shutdown()


def test_the_systemd_example_config_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("LAZARUS_"):
            monkeypatch.delenv(name)
    path = tmp_path / "lazarus.yaml"
    path.write_text(_block_after("`/etc/lazarus/lazarus.yaml`", "yaml"), encoding="utf-8")
    settings = load_settings(path)
    assert settings.scheduler.transport == "local"
    unit = _block_after("/etc/systemd/system/lazarus-worker@.service", "ini")
    (stop_timeout,) = re.findall(r"^TimeoutStopSec=(\d+)$", unit, flags=re.MULTILINE)
    assert timedelta(seconds=int(stop_timeout)) > settings.worker.graceful_shutdown
    assert "ExecStart=/opt/lazarus/bin/lazarus worker --role %i" in unit
