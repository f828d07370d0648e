"""The per-job tracker turns snapshots and log lines into the few events a workflow needs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.telemetry.tracker import SETTLE, JobTracker

T0 = datetime(2026, 11, 29, 12, tzinfo=UTC)


def snap(state=JobState.RUNNING, restarts=0, nodes=("node1", "node2"), **kw) -> JobSnapshot:
    return JobSnapshot(job_id=7, state=state, restarts=restarts, nodes=list(nodes), start_time=T0, **kw)


def types(events) -> list[str]:
    return [type(e).__name__ for e in events]


def test_a_running_attempt_is_reported_once():
    t = JobTracker(job_id=7, layout_nodes=[])
    assert types(t.observe(snap(), T0)) == ["AttemptStarted"]
    assert t.observe(snap(), T0) == []


def test_pending_job_is_not_started_yet():
    t = JobTracker(job_id=7, layout_nodes=[])
    assert t.observe(JobSnapshot(job_id=7, state=JobState.PENDING), T0) == []


def test_failure_line_is_reported_after_the_settle_time_with_the_root_node():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed(
        "out",
        1,
        "1: [1700000000.000] node2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        T0,
    )
    t.feed(
        "out",
        2,
        "0: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        T0,
    )
    assert t.anomaly_events(T0) == []  # still settling
    events = t.anomaly_events(T0 + SETTLE)
    assert types(events) == ["AnomalyDetected"]
    diag = events[0].anomaly.diagnosis
    assert diag.implicated_nodes == ["node2"]
    assert events[0].anomaly.observed_at == T0
    assert t.anomaly_events(T0 + 2 * SETTLE) == []  # once per attempt


def test_job_end_flushes_a_pending_anomaly_before_the_end_event():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "1: RuntimeError: CUDA error: uncorrectable ECC error encountered", T0)
    events = t.finish(snap(JobState.FAILED, exit_code=1), T0, [])
    assert types(events) == ["AnomalyDetected", "AttemptEnded"]


def test_benign_noise_reports_nothing():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    for i, line in enumerate(
        [
            "NCCL INFO Channel 00/02 :    0   1",
            "UserWarning: this function will be deprecated in a future release",
            "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        ]
    ):
        t.feed("out", i + 1, line, T0)
    assert t.anomaly_events(T0 + timedelta(seconds=5), force=True) == []


def test_progress_digests_are_coarse_but_checkpoints_and_budget_changes_are_immediate():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    interval = timedelta(seconds=10)
    t.feed("out", 1, "LAZARUS step=1 loss=2.0", T0)
    assert types(t.digest_events(T0, interval)) == ["ProgressDigest"]
    t.feed("out", 2, "LAZARUS step=2 loss=1.9", T0 + timedelta(seconds=1))
    [learned] = t.digest_events(T0 + timedelta(seconds=1), interval)  # the budget was learned: tell at once
    assert learned.max_step_interval == timedelta(seconds=1)
    assert learned.hang_budget == max(timedelta(seconds=8), t.policy.hang_budget_min)
    t.feed("out", 3, "LAZARUS step=3 loss=1.8", T0 + timedelta(seconds=2))
    assert t.digest_events(T0 + timedelta(seconds=2), interval) == []  # nothing new worth a signal
    t.feed("out", 4, "LAZARUS step=4 loss=1.7 checkpoint=4", T0 + timedelta(seconds=3))
    [digest] = t.digest_events(T0 + timedelta(seconds=3), interval)
    assert (digest.step, digest.checkpoint) == (4, 4)


def test_an_ending_attempt_flushes_the_last_step_and_checkpoint_seen_before_its_end():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    for step in range(1, 24):
        t.feed(
            "out",
            step,
            f"LAZARUS step={step} loss=1.0" + (f" checkpoint={step}" if step % 5 == 0 else ""),
            T0 + timedelta(seconds=step),
        )
        t.digest_events(T0 + timedelta(seconds=step), timedelta(minutes=5))  # throttled: most steps untold
    events = t.finish(snap(JobState.COMPLETED, exit_code=0), T0 + timedelta(seconds=24), [])
    assert types(events) == ["ProgressDigest", "AttemptEnded"]
    assert (events[0].step, events[0].checkpoint) == (23, 20)
    assert events[0].last_progress_at == T0 + timedelta(seconds=23)


def test_a_requeue_flushes_the_old_attempts_progress_before_its_end():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "LAZARUS step=1 loss=2.0", T0)
    t.digest_events(T0, timedelta(minutes=5))
    t.feed("out", 2, "LAZARUS step=40 loss=1.0 checkpoint=40", T0 + timedelta(seconds=4))
    events = t.observe(snap(restarts=1), T0 + timedelta(seconds=9))
    assert types(events) == ["ProgressDigest", "AttemptEnded", "AttemptStarted"]
    assert (events[0].attempt, events[0].step, events[0].checkpoint) == (0, 40, 40)


def test_an_attempt_whose_progress_was_told_ends_without_another_digest():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "LAZARUS step=1 loss=2.0", T0)
    t.digest_events(T0, timedelta(minutes=5))
    assert types(t.finish(snap(JobState.COMPLETED, exit_code=0), T0, [])) == ["AttemptEnded"]


def test_attempt_boundary_resets_detection_and_ends_the_old_attempt():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "1: RuntimeError: CUDA error: uncorrectable ECC error encountered", T0)
    t.anomaly_events(T0 + SETTLE)
    events = t.observe(snap(restarts=1, nodes=("node1", "node3")), T0 + timedelta(seconds=9))
    assert types(events) == ["AttemptEnded", "AttemptStarted"]
    assert events[0].state == JobState.REQUEUED and events[1].attempt == 1
    assert t.anomaly_events(T0 + timedelta(seconds=20), force=True) == []  # stale failure never re-triggers
    window = timedelta(seconds=15)
    assert t.progress_view(0, T0, window).known is False and t.progress_view(1, T0, window).known is True


def test_checkpoint_start_is_reported_at_once_so_the_hang_budget_widens():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "LAZARUS step=5 loss=2.0", T0)
    t.digest_events(T0, timedelta(minutes=5))
    t.feed("out", 2, "LAZARUS step=5 phase=checkpoint", T0 + timedelta(seconds=1))
    [digest] = t.digest_events(T0 + timedelta(seconds=1), timedelta(minutes=5))
    assert digest.checkpointing is True
    t.feed("out", 3, "LAZARUS step=5 checkpoint=5", T0 + timedelta(seconds=30))
    [digest] = t.digest_events(T0 + timedelta(seconds=30), timedelta(minutes=5))
    assert digest.checkpointing is False and digest.checkpoint == 5


def test_completing_after_a_requeue_is_not_the_start_of_the_new_attempt():
    """After requeuehold Slurm shows COMPLETING with the restart count already raised, on the old nodes."""
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    events = t.observe(snap(JobState.COMPLETING, restarts=1), T0 + timedelta(seconds=1))
    assert types(events) == ["AttemptEnded"]
    assert t.observe(JobSnapshot(job_id=7, state=JobState.PENDING, restarts=1), T0 + timedelta(seconds=2)) == []
    [start] = t.observe(snap(restarts=1, nodes=("node3", "node4")), T0 + timedelta(seconds=7))
    assert start.attempt == 1 and start.nodes == ["node3", "node4"]


def test_rank_prefixes_map_through_the_jobs_real_tasks_per_node():
    """8 ranks on 2 nodes: rank 3 runs on node1, not on the fourth node of some guess."""
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(nodes=("node1", "node2"), tasks_per_node=4), T0)
    t.feed("out", 1, "3: RuntimeError: CUDA error: uncorrectable ECC error encountered", T0)
    [event] = t.anomaly_events(T0 + SETTLE)
    assert event.anomaly.diagnosis.implicated_nodes == ["node1"]


def test_unknown_rank_layout_blames_no_node_rather_than_a_wrong_one():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(nodes=("node1", "node2")), T0)
    t.feed("out", 1, "3: RuntimeError: CUDA error: uncorrectable ECC error encountered", T0)
    [event] = t.anomaly_events(T0 + SETTLE)
    assert event.anomaly.diagnosis.implicated_nodes == []


def test_a_failure_line_naming_a_node_outside_the_allocation_implicates_nobody():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed(
        "out", 1, "May  1 12:00:03 node4 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.", T0
    )
    t.feed("out", 2, "srun: error: Node failure on x[1-99999]", T0)
    (event,) = t.anomaly_events(T0 + SETTLE)
    diag = event.anomaly.diagnosis
    assert diag.implicated_nodes == []
    assert any("node4" in note and "outside its allocation" in note for note in diag.notes)


def test_each_attempts_first_progress_line_travels_with_its_digests_and_its_view():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "LAZARUS step=30 loss=1.0", T0)
    t.observe(snap(restarts=1, nodes=("node1", "node3")), T0 + timedelta(seconds=5))
    t.feed("out", 2, "rank 0: attempt 1, resuming from checkpoint 20", T0 + timedelta(seconds=6))
    t.feed("out", 3, "LAZARUS phase=checkpoint step=20", T0 + timedelta(seconds=7))  # not training progress
    t.feed("out", 4, "LAZARUS step=21 loss=1.0", T0 + timedelta(seconds=8))
    t.feed("out", 5, "LAZARUS step=24 loss=1.0", T0 + timedelta(seconds=11))
    [digest] = t.digest_events(T0 + timedelta(seconds=12), timedelta(minutes=5))
    assert (digest.attempt, digest.step, digest.first_step) == (1, 24, 21)
    assert digest.first_progress_at == T0 + timedelta(seconds=8)
    view = t.progress_view(1, T0 + timedelta(seconds=12), timedelta(seconds=15))
    assert (view.first_step, view.first_progress_at) == (21, T0 + timedelta(seconds=8))


def test_the_declared_total_steps_travel_with_the_digest_and_the_view_for_every_framework():
    for line, total in (
        ("LAZARUS step=30 total_steps=30 loss=1.0 checkpoint=30", 30),
        (
            " [2024-05-01 12:00:00] iteration       30/      30 | consumed samples:  960 | elapsed time per "
            "iteration (ms): 512.0 | lm loss: 1.0E+00 |",
            30,
        ),
        ("Training:  100%|##########| 30/30 [00:15<00:00,  2.00it/s]", 30),
    ):
        t = JobTracker(job_id=7, layout_nodes=[])
        t.observe(snap(), T0)
        t.feed("out", 1, line, T0 + timedelta(seconds=1))
        [digest] = t.digest_events(T0 + timedelta(seconds=2), timedelta(minutes=5))
        assert (digest.step, digest.total_steps) == (30, total), line
        assert t.progress_view(0, T0 + timedelta(seconds=2), timedelta(seconds=15)).total_steps == total


def test_progress_lines_without_a_total_send_none_and_keep_the_last_total_declared():
    t = JobTracker(job_id=7, layout_nodes=[])
    t.observe(snap(), T0)
    t.feed("out", 1, "LAZARUS step=10 loss=1.0", T0)
    assert t.progress_view(0, T0, timedelta(seconds=15)).total_steps is None
    t.feed("out", 2, "LAZARUS step=20 total_steps=30 loss=1.0", T0 + timedelta(seconds=1))
    t.feed("out", 3, "LAZARUS step=30 checkpoint=30", T0 + timedelta(seconds=2))
    assert t.progress_view(0, T0 + timedelta(seconds=2), timedelta(seconds=15)).total_steps == 30
