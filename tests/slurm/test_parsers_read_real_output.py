"""Parsers turn real Slurm 22.05 output (captured on the local cluster, in samples/) into models."""

from __future__ import annotations

from lazarus.models.slurm import JobState
from lazarus.slurm.parse import parse_sacct, parse_scontrol_jobs, parse_scontrol_nodes, parse_scontrol_reservations
from lazarus.slurm.parse_squeue import decode_wait_status, parse_squeue_json
from tests.slurm.conftest import SAMPLES


def sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def test_scontrol_job_gives_attempt_nodes_exclusions_and_expanded_stdout() -> None:
    [job] = parse_scontrol_jobs(sample("scontrol_job_running.txt"))
    assert job.job_id == 7 and job.name == "train llama" and job.user == "root"
    assert job.state is JobState.RUNNING and not job.held
    assert job.restarts == 1
    assert job.nodes == ["node3", "node4"] and job.excluded_nodes == ["node2"]
    assert job.stdout_path == "/tmp/lzs/train-7.out"
    assert job.exit_code is None  # still running


def test_free_text_comment_cannot_impersonate_slurm_fields() -> None:
    # The comment holds "Restarts=9 StdOut=/etc/shadow": it must stay inside the comment.
    [job] = parse_scontrol_jobs(sample("scontrol_job_running.txt"))
    assert job.comment == '{"lazarus": {"policy": "default"}} Restarts=9 StdOut=/etc/shadow'
    assert job.restarts == 1 and job.stdout_path == "/tmp/lzs/train-7.out"


def test_requeue_held_job_is_pending_held_with_the_next_attempt_index() -> None:
    [job] = parse_scontrol_jobs(sample("scontrol_job_requeue_held.txt"))
    assert job.state is JobState.PENDING and job.held
    assert job.state_reason == "job_requeued_in_held_state"
    assert job.restarts == 1 and job.nodes == []


def test_user_held_pending_job_is_held() -> None:
    [job] = parse_scontrol_jobs(sample("scontrol_job_pending_user_held.txt"))
    assert job.held and job.state_reason == "JobHeldUser" and job.start_time is None


def test_failed_job_carries_its_exit_code() -> None:
    [job] = parse_scontrol_jobs(sample("scontrol_job_failed.txt"))
    assert job.state is JobState.FAILED and job.exit_code == 3 and job.exit_signal is None
    assert job.end_time is not None


def test_nodes_with_state_and_free_text_reason() -> None:
    nodes = {n.name: n for n in parse_scontrol_nodes(sample("scontrol_nodes_one_drained.txt"))}
    assert sorted(nodes) == ["node1", "node2", "node3", "node4"]
    assert nodes["node4"].drained and nodes["node4"].state == "MIXED+DRAIN"
    assert nodes["node4"].reason == "bad gpu: xid 79 Key=fake [root@2026-11-29T14:21:11]"
    assert not nodes["node1"].drained and not nodes["node1"].down


def test_squeue_json_lists_every_job_with_decoded_exit_status() -> None:
    jobs = {j.job_id: j for j in parse_squeue_json(sample("squeue.json"))}
    assert set(jobs) == set(range(1, 10))  # the whole cluster: 22.05 ignores -j/-t with --json
    assert jobs[8].state is JobState.FAILED and jobs[8].exit_code == 3  # raw wait status 768
    assert jobs[3].state is JobState.CANCELLED and jobs[3].exit_signal == 15
    assert jobs[9].held and jobs[9].state_reason == "JobHeldUser"
    assert jobs[7].restarts == 1 and jobs[7].excluded_nodes == ["node2"] and jobs[7].nodes == ["node3", "node4"]
    assert jobs[7].comment.startswith('{"lazarus"')
    assert jobs[7].stdout_path is None  # squeue only knows the unexpanded %j pattern


def test_wait_status_decoding() -> None:
    assert decode_wait_status(768) == (3, None)
    assert decode_wait_status(1792) == (7, None)
    assert decode_wait_status(9) == (0, 9)
    assert decode_wait_status(0) == (0, None)


def test_sacct_lists_each_attempt_in_order() -> None:
    rows = parse_sacct(sample("sacct_requeued_and_failed.txt"))
    assert [(r.job_id, r.state, r.exit_code) for r in rows] == [
        ("7", JobState.REQUEUED, 0),
        ("8", JobState.FAILED, 3),
        ("7", JobState.RUNNING, 0),
    ]
    assert rows[0].nodes == ["node1", "node2"] and rows[2].end_time is None


def test_sacct_steps_carry_signals() -> None:
    rows = parse_sacct(sample("sacct_with_steps.txt"))
    batch = [r for r in rows if r.job_id == "7.batch"]
    assert batch[0].state is JobState.CANCELLED and batch[0].exit_signal == 15


def test_scontrol_reservations_give_names_expanded_nodes_and_state() -> None:
    found = parse_scontrol_reservations(sample("scontrol_reservations.txt"))
    assert [(r.name, r.nodes, r.state) for r in found] == [
        ("big-run", ["node1", "node3"], "ACTIVE"),
        ("maint", ["node4"], "INACTIVE"),  # a maintenance window to come: its nodes are reserved too
    ]
    assert parse_scontrol_reservations("No reservations in the system\n") == []
