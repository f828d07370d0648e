"""A job id Slurm does not know is a non-retryable UnknownJobError for every read and action, and nothing is written."""

from __future__ import annotations

import pytest

from lazarus.models.slurm import RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import UnknownJobError
from tests.slurm.conftest import RecordingTransport, writes

pytestmark = [pytest.mark.slurm, pytest.mark.asyncio]

UNKNOWN = 987654321


async def test_unknown_job_id_is_a_permanent_error_everywhere(
    local_client: SlurmClient, recorder: RecordingTransport
) -> None:
    for call in (
        local_client.job(UNKNOWN),
        local_client.cancel(UNKNOWN),
        local_client.release(UNKNOWN),
        local_client.set_comment(UNKNOWN, '{"lazarus": {"policy": "default"}}'),
        local_client.restart_excluding(RestartRequest(job_id=UNKNOWN, expected_attempt=0, exclude_nodes=["node1"])),
    ):
        with pytest.raises(UnknownJobError, match=f"job {UNKNOWN}") as err:
            await call
        assert not err.value.retryable
    assert writes(recorder) == []


async def test_accounting_has_no_attempts_for_an_unknown_job(local_client: SlurmClient) -> None:
    assert await local_client.attempts(UNKNOWN) == []
