"""Clients address the workflows by the names in lazarus/models/names.py, and the workflows answer to them."""

from __future__ import annotations

from temporalio import workflow

from lazarus.models import names
from workflows.job_recovery import JobRecoveryWorkflow
from workflows.node_ledger import NodeLedgerWorkflow
from workflows.telemetry_lease import TelemetryLeaseWorkflow


def test_the_job_workflow_answers_to_its_names():
    defn = workflow._Definition.must_from_class(JobRecoveryWorkflow)
    assert defn.name == names.JOB_WORKFLOW
    assert set(defn.signals) == {
        names.JOB_EVENT,
        names.APPROVE_ADVICE,
        names.REJECT_ADVICE,
        names.SET_MODE,
        *names.EVENT_SIGNALS.values(),
    }
    assert set(defn.updates) == {names.APPROVE_ADVICE, names.REJECT_ADVICE}
    assert set(defn.queries) == {names.JOB_STATUS}


def test_the_node_ledger_answers_to_its_names():
    defn = workflow._Definition.must_from_class(NodeLedgerWorkflow)
    assert defn.name == names.LEDGER_WORKFLOW
    assert set(defn.signals) == {names.RECORD_IMPLICATION, names.SET_LEDGER_POLICY, names.SET_CLUSTER_MODE}
    assert set(defn.updates) == {names.RESUME_NODE, names.DRAIN_NODE}
    assert set(defn.queries) == {names.LEDGER_VIEW}


def test_the_telemetry_lease_answers_to_its_names():
    defn = workflow._Definition.must_from_class(TelemetryLeaseWorkflow)
    assert defn.name == names.TELEMETRY_LEASE_WORKFLOW
    assert set(defn.signals) == set()
    assert set(defn.updates) == {names.ACQUIRE_LEASE, names.RENEW_LEASE, names.RELEASE_LEASE}
    assert set(defn.queries) == {names.LEASE_VIEW}


def test_workflow_ids_name_the_cluster_and_the_job():
    assert names.workflow_id("gpu-a", 1234) == "lazarus-gpu-a-1234"
    assert names.ledger_id("gpu-a") == "lazarus-gpu-a-ledger"
    assert names.telemetry_lease_id("gpu-a") == "lazarus-gpu-a-telemetry-lease"
