"""Spec: each cluster's workers poll their own task queues unless told otherwise, so two clusters sharing
one Temporal namespace never take each other's workflow or Slurm tasks."""

from __future__ import annotations

from pathlib import Path

from lazarus.config import TaskQueues, load_settings
from lazarus.models.names import ledger_id, workflow_id


def test_task_queues_default_to_the_cluster_s_own_names():
    queues = load_settings(cluster="alpha").task_queues
    assert queues == TaskQueues(
        control="lazarus-alpha-control", scheduler="lazarus-alpha-scheduler", telemetry="lazarus-alpha-telemetry"
    )


def test_two_clusters_share_no_task_queue_and_no_workflow_id():
    alpha, beta = load_settings(cluster="alpha"), load_settings(cluster="beta")
    assert not set(alpha.task_queues.model_dump().values()) & set(beta.task_queues.model_dump().values())
    assert workflow_id("alpha", 42) != workflow_id("beta", 42)
    assert ledger_id("alpha") != ledger_id("beta")


def test_the_cluster_named_in_the_file_names_the_queues(tmp_path: Path):
    path = tmp_path / "lazarus.yaml"
    path.write_text("cluster: gpu-east\n")
    assert load_settings(path).task_queues.scheduler == "lazarus-gpu-east-scheduler"


def test_a_queue_given_explicitly_is_kept_and_the_others_follow_the_cluster(monkeypatch):
    monkeypatch.setenv("LAZARUS_TASK_QUEUES__CONTROL", "lazarus-control")
    queues = load_settings(cluster="alpha").task_queues
    assert queues.control == "lazarus-control"
    assert queues.telemetry == "lazarus-alpha-telemetry"
