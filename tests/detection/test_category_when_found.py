"""Category and advice once the failure is found, sixth pass of issue 9 (docs/benchmarks.md, "Sixth pass").

A remote service the program could not reach (a hub, an object store) is the network's fault, not the
program's: infrastructure, retried. Ranks whose collective timeouts name different collectives ran
different programs (mismatched collectives): a bug in the program, stopped. A pod the kubelet evicted for
memory pressure ran out of host memory, like a process the OOM killer ended: stopped. Each case is one log written
for the test, given to ``diagnose_files``, the function behind ``lazarus diagnose``."""

from __future__ import annotations

import pytest

from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice
from tests.detection.logs import diagnose_text

CRASH, HANG = FailureKind.CRASH, FailureKind.HANG
STOP, SAME = RetryAdvice.STOP, RetryAdvice.RETRY_SAME_NODES

TRACEBACK = """Traceback (most recent call last):
  File "train.py", line 12, in <module>
    data = load_dataset("org/set")
  File "/usr/lib/python3/site-packages/datasets/load.py", line 30, in load_dataset
    raise {raised}
{last}
"""


@pytest.mark.parametrize(
    "last",
    [
        "ConnectionError: Couldn't reach https://huggingface.co/datasets/org/set/resolve/main/train.json",
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. "
        "(read timeout=10)",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='cdn-lfs.hf.co', port=443): Max retries "
        "exceeded with url: /repos/ab/cd (Caused by NewConnectionError('Failed to establish a new connection'))",
        "urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at 0x7f>, "
        "'Connection to s3.amazonaws.com timed out. (connect timeout=60)')",
        "[rank3]: urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='s3.amazonaws.com', port=443): Max "
        "retries exceeded with url: /bucket/shard-0001.tar",
    ],
)
def test_a_remote_service_that_cannot_be_reached_is_infrastructure_and_retried(tmp_path, last):
    result = diagnose_text(tmp_path, TRACEBACK.format(raised="ConnectionError(url)", last=last))
    assert (result.failure_kind, result.category, result.retry_advice) == (CRASH, Category.INFRASTRUCTURE, SAME)
    assert result.signature == "remote_request_failed"
    assert result.implicated_nodes == []


def test_an_http_read_timeout_reported_in_a_warning_is_a_failed_request_not_a_hang(tmp_path):
    line = (
        "Warning: Failed to load dataset config 'default' from 'org/set'. Error: (ReadTimeoutError(\"HTTPSConnection"
        "Pool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: 38f9)')\n"
    )
    result = diagnose_text(tmp_path, line)
    assert (result.failure_kind, result.category, result.retry_advice) == (CRASH, Category.INFRASTRUCTURE, SAME)


@pytest.mark.parametrize(
    "last",
    [
        "ConnectionResetError: [Errno 104] Connection reset by peer",
        "ValueError: could not convert string to float: 'n/a'",
    ],
)
def test_other_exceptions_keep_their_answer(tmp_path, last):
    """A pipe reset between the job's own processes is not a remote service; a ValueError stays a bug."""
    result = diagnose_text(tmp_path, TRACEBACK.format(raised="err", last=last))
    assert result.signature != "remote_request_failed"


def _timeout(rank: int, seq: int, op: str) -> str:
    return (
        f"[rank{rank}]:[E1130 10:00:0{rank}.100000 ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught "
        f"collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1024, NumelOut=1024, "
        "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
    )


def test_ranks_timing_out_in_different_collectives_are_a_program_bug_that_stops(tmp_path):
    result = diagnose_text(tmp_path, _timeout(0, 7219, "BROADCAST") + _timeout(1, 7221, "ALLREDUCE"))
    assert (result.failure_kind, result.category, result.retry_advice) == (HANG, Category.APPLICATION, STOP)
    assert result.implicated_nodes == []
    assert any("mismatched collectives" in note for note in result.notes)


@pytest.mark.parametrize(
    "lines",
    [
        [(0, 305, "ALLREDUCE"), (1, 305, "ALLREDUCE")],
        [(0, 33, "ALLREDUCE"), (1, 257, "ALLREDUCE"), (2, 1032, "ALLREDUCE")],
        [(3, 4711, "_ALLGATHER_BASE")],
    ],
)
def test_ranks_timing_out_in_the_same_collective_stay_an_unknown_hang_that_is_retried(tmp_path, lines):
    """One slow or stuck rank makes the others time out in the collective they all share: no bug is shown."""
    result = diagnose_text(tmp_path, "".join(_timeout(*line) for line in lines))
    assert (result.failure_kind, result.category, result.retry_advice) == (HANG, Category.UNKNOWN, SAME)


@pytest.mark.parametrize(
    "line",
    [
        "4m11s  Warning  Evicted  pod/train-0  The node was low on resource: memory. Container train was using "
        "61203216Ki, which exceeds its request of 32Gi.",
        "4m07s  Warning  Evicted  pod/train-1  The node had condition: [MemoryPressure].",
    ],
)
def test_a_pod_evicted_for_memory_pressure_ran_out_of_host_memory_and_stops(tmp_path, line):
    """The kubelet's memory eviction is the host running out of memory, like the kernel's OOM killer."""
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.failure_kind, result.category, result.retry_advice) == (CRASH, Category.APPLICATION, STOP)


def test_a_pod_evicted_for_disk_pressure_stays_an_infrastructure_eviction_that_is_retried(tmp_path):
    line = "message: 'The node was low on resource: ephemeral-storage. Container w was using 21Gi, which exceeds its request of 0.'"
    result = diagnose_text(tmp_path, line + "\n")
    assert (result.category, result.retry_advice, result.signature) == (Category.INFRASTRUCTURE, SAME, "pod_evicted")


def test_a_timeout_a_client_logged_and_retried_does_not_hide_the_programs_own_exception(tmp_path):
    text = (
        "wandb: WARNING A graphql request initiated by the public wandb API timed out (timeout=19 sec). "
        "HTTPSConnectionPool(host='api.wandb.ai', port=443): Read timed out. (read timeout=19)\n"
        + TRACEBACK.format(raised="ValueError(shape)", last="ValueError: shapes (4, 8) and (16,) not aligned")
    )
    result = diagnose_text(tmp_path, text)
    assert (result.category, result.retry_advice, result.signature) == (Category.APPLICATION, STOP, "python_exception")
