"""The job workflow's static summary and details (Temporal user metadata, set at start) say which job it is, whose,
on which nodes and in which state Lazarus found it; the job's own strings cannot turn them into something else."""

from __future__ import annotations

from lazarus.models.policy import Mode
from lazarus.models.recovery import JobRecoveryInput
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.metadata import MAX_NODES_SHOWN, job_details, job_summary


def _job(**kw) -> JobSnapshot:
    base = dict(job_id=42, name="llama-70b", user="alice", partition="gpu", state=JobState.RUNNING)
    return JobSnapshot(**(base | {"nodes": ["node1", "node2"]} | kw))


def _inp(**kw) -> JobRecoveryInput:
    return JobRecoveryInput(cluster="dev", job_id=42, policy_name="default", cluster_mode=Mode.MONITOR, **kw)


def test_the_summary_names_the_job_its_user_and_its_state_at_start():
    assert job_summary(_job()) == "Slurm job 42 (llama-70b) of alice: RUNNING at start"


def test_the_details_give_job_user_nodes_state_and_how_lazarus_watches_it():
    details = job_details(_job(restarts=2), _inp(job_mode=Mode.ACT))
    assert "**Slurm job** 42 `llama-70b` on cluster `dev`" in details
    assert "**User** `alice`, partition `gpu`" in details
    assert "**Nodes at start** node1,node2 (2)" in details
    assert "**State at start** RUNNING, attempt 2" in details
    assert "**Lazarus** policy `default`, act mode" in details


def test_a_pending_job_has_no_nodes_yet():
    assert "**Nodes at start** none yet (pending)" in job_details(_job(nodes=[], state=JobState.PENDING), _inp())


def test_a_large_allocation_is_shown_in_part_and_counted():
    nodes = [f"gpu{i:04d}" for i in range(1000)]
    details = job_details(_job(nodes=nodes), _inp())
    assert f"gpu0015 and {1000 - MAX_NODES_SHOWN} more (1000)" in details
    assert "gpu0016" not in details


def test_an_ignored_job_says_why():
    assert "**Ignored** unknown policy 'x'" in job_details(_job(), _inp(opt_in_error="unknown policy 'x'"))


def test_a_hostile_job_name_stays_one_line_of_quoted_text():
    hostile = "x`[click](http://evil)`\n# heading" + "y" * 500
    summary, details = job_summary(_job(name=hostile)), job_details(_job(name=hostile), _inp())
    assert "\n" not in summary and "`" not in summary and len(summary) < 200
    name_line = details.split("\n\n")[0]
    assert name_line.count("`") == 4  # the name's code span and the cluster's, nothing of the name's own
    assert "# heading" not in details.replace("?# heading", "")
