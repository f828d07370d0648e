"""Every value bound for a command line is validated first: bad ones are refused before any process starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lazarus.models.slurm import NodeAction, RestartRequest, SubmitRequest
from lazarus.slurm import validate
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.errors import InvalidArgumentError
from lazarus.slurm.transport import LocalTransport
from tests.slurm.conftest import RecordingTransport

HOSTILE_NODE_NAMES = [
    "node1;touch {marker}",
    "node1 && touch {marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "node1|touch {marker}",
    "node1\ntouch {marker}",
    "node[1-2];touch {marker}",
    "../node1",
    "node1>{marker}",
    "",
]


@pytest.fixture
def no_spawn(monkeypatch: pytest.MonkeyPatch) -> RecordingTransport:
    """A client transport that records calls, with process creation itself made to fail the test."""

    async def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was spawned: {args}")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", forbidden)
    return RecordingTransport(LocalTransport())


@pytest.mark.asyncio
@pytest.mark.parametrize("template", HOSTILE_NODE_NAMES)
async def test_node_names_with_shell_metacharacters_are_rejected_before_any_command(
    template: str, no_spawn: RecordingTransport, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    name = template.format(marker=marker)
    client = SlurmClient(no_spawn)
    with pytest.raises(InvalidArgumentError):
        await client.drain(NodeAction(nodes=[name], reason="test"))
    with pytest.raises(InvalidArgumentError):
        await client.resume(NodeAction(nodes=["node1", name]))
    with pytest.raises(InvalidArgumentError):
        await client.restart_excluding(RestartRequest(job_id=12, expected_attempt=0, exclude_nodes=[name]))
    assert no_spawn.calls == [] and not marker.exists()


@pytest.mark.asyncio
@pytest.mark.parametrize("bad", [0, -1, 2**32, "12; scancel 1", "12 13", "0x1f", "", True, 1.5, "١٢"])
async def test_job_ids_must_be_positive_integers(bad: object, no_spawn: RecordingTransport) -> None:
    client = SlurmClient(no_spawn)
    with pytest.raises(InvalidArgumentError):
        await client.job(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        await client.cancel(bad)  # type: ignore[arg-type]
    assert no_spawn.calls == []


@pytest.mark.asyncio
@pytest.mark.parametrize("bad", ["bad\nState=RESUME", "tab\there", "bell\x07", "x" * 201])
async def test_reasons_must_be_one_printable_line(bad: str, no_spawn: RecordingTransport) -> None:
    with pytest.raises(InvalidArgumentError):
        await SlurmClient(no_spawn).drain(NodeAction(nodes=["node1"], reason=bad))
    assert no_spawn.calls == []


def test_hostlists_expand_to_sorted_unique_names() -> None:
    assert validate.node_names(["node[10,2-3]", "node2", "gpu-a.01"]) == ["gpu-a.01", "node2", "node3", "node10"]
    assert validate.hostlist_expr(["node1", "node2", "node4"]) == "node[1-2,4]"


def test_huge_hostlist_expansions_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="more than"):
        validate.node_names(["n[1-40000]", "m[1-40000]"])


def test_job_id_accepts_decimal_strings() -> None:
    assert validate.job_id("42") == 42 and validate.job_id(42) == 42


@pytest.mark.asyncio
@pytest.mark.parametrize("bad", [0, -1, "12; scancel 1", "12 13", "", True])
async def test_set_comment_refuses_a_bad_job_id(bad: object, no_spawn: RecordingTransport) -> None:
    with pytest.raises(InvalidArgumentError):
        await SlurmClient(no_spawn).set_comment(bad, '{"lazarus": {}}')  # type: ignore[arg-type]
    assert no_spawn.calls == []


@pytest.mark.asyncio
@pytest.mark.parametrize("bad", ["", "   ", "a\nJobId=1", "tab\there", "nul\x00", "x" * 4097])
async def test_comments_must_be_one_printable_line_of_at_most_4096_bytes(
    bad: str, no_spawn: RecordingTransport
) -> None:
    client = SlurmClient(no_spawn)
    with pytest.raises(InvalidArgumentError):
        await client.set_comment(12, bad)
    with pytest.raises(InvalidArgumentError):
        await client.submit(SubmitRequest(args=["job.sh"], comment=bad))
    assert no_spawn.calls == []


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "args",
    [[], ["job.sh", ""], ["--job-name=a\nb", "job.sh"], ["--comment=other", "job.sh"], ["--comment", "x", "job.sh"]],
)
async def test_submissions_with_bad_or_conflicting_arguments_are_refused(
    args: list[str], no_spawn: RecordingTransport
) -> None:
    with pytest.raises(InvalidArgumentError):
        await SlurmClient(no_spawn).submit(SubmitRequest(args=args, comment='{"lazarus": {}}'))
    assert no_spawn.calls == []


def test_comments_are_stripped_and_keep_shell_metacharacters_as_data() -> None:
    assert validate.comment('  {"a": "$(id); `id` | x && y"}  ') == '{"a": "$(id); `id` | x && y"}'
