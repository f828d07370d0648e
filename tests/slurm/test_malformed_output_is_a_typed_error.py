"""Output the parsers do not understand raises MalformedOutputError quoting the text (shortened), never a bare crash."""

from __future__ import annotations

import pytest

from lazarus.slurm.errors import ControllerUnreachableError, MalformedOutputError
from lazarus.slurm.parse import parse_sacct, parse_scontrol_jobs, parse_scontrol_nodes
from lazarus.slurm.parse_squeue import parse_squeue_json
from tests.slurm.conftest import SAMPLES


@pytest.mark.parametrize(
    "text",
    [
        "<html>502 Bad Gateway</html>",
        '{"meta": {}, "errors": []}',
        '{"jobs": "none"}',
        '{"jobs": [{"job_id": "seven"}]}',
        '{"jobs": [{"job_id": 7, "nodes": "node[1-"}]}',
    ],
)
def test_squeue_json_that_is_not_a_job_list(text: str) -> None:
    with pytest.raises(MalformedOutputError) as err:
        parse_squeue_json(text)
    assert "squeue" in str(err.value) or "hostlist" in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        "slurm_load_jobs error: something new",
        "JobName=x\n   JobState=RUNNING",  # no JobId
        "JobId=12 JobName=x\n   Restarts=0",  # no JobState
        "   JobState=RUNNING",  # starts with a continuation line
        "JobId=12 JobName=x\n   JobState=RUNNING ExitCode=weird",
        "JobId=12 JobName=x\n   JobState=RUNNING Restarts=0 Restarts=1",  # a field printed twice
        "JobId=12 JobName=x\n   JobState=RUNNING SubmitTime=yesterday",
    ],
)
def test_scontrol_job_records_that_do_not_parse(text: str) -> None:
    with pytest.raises(MalformedOutputError):
        parse_scontrol_jobs(text)


def test_scontrol_node_without_state() -> None:
    with pytest.raises(MalformedOutputError, match="NodeName/State"):
        parse_scontrol_nodes("NodeName=node1 Arch=x86_64\n   CPUAlloc=0")


@pytest.mark.parametrize("text", ["12|FAILED|3:0|node1", "12|FAILED|three|node1|Unknown|Unknown"])
def test_sacct_rows_with_wrong_shape(text: str) -> None:
    with pytest.raises(MalformedOutputError):
        parse_sacct(text)


def test_the_message_quotes_long_output_shortened() -> None:
    garbage = "x" * 5000
    with pytest.raises(MalformedOutputError) as err:
        parse_squeue_json(garbage)
    message = str(err.value)
    assert "xxxx" in message and "more characters" in message and len(message) < 600


def test_squeue_json_with_errors_is_not_an_empty_cluster() -> None:
    # Captured with slurmctld unreachable: exit status 0, "jobs": [], the failure only in "errors".
    with pytest.raises(ControllerUnreachableError, match="Failed while looking for jobs"):
        parse_squeue_json((SAMPLES / "squeue_controller_down.json").read_text())
