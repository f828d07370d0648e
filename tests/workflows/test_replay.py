"""Stored workflow histories still replay: a change to workflow code that would break running workflows
(non-determinism) fails here, before it is deployed. Record new ones with scripts/record_histories.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer

from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow

HISTORIES = sorted((Path(__file__).parents[1] / "histories").glob("*.json"))


def test_histories_are_present():
    assert len(HISTORIES) >= 4


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
async def test_stored_history_replays(path: Path):
    history = WorkflowHistory.from_json(path.stem, path.read_text())
    replayer = Replayer(workflows=[JobRecoveryWorkflow, NodeLedgerWorkflow], data_converter=pydantic_data_converter)
    await replayer.replay_workflow(history)
