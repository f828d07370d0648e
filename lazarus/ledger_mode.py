"""Reading the cluster-wide mode (the kill switch) from the node ledger.

The ledger publishes the mode in its memo (patch ``ledger-publishes-its-mode``), which the Temporal server
serves from the workflow's own record (``describe``): no worker has to answer, so the read holds however busy
the control worker is (at 10,000 watched jobs its queries timed out and every action waited for a person). A
ledger started before the patch has no such memo and is asked with its ``view`` query, as before.

Either way an unreadable ledger raises: the callers fail closed (the advice waits for a person).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client, WorkflowQueryFailedError, WorkflowQueryRejectedError
from temporalio.service import RPCError

from lazarus.models import names
from lazarus.models.ledger import ClusterMode, LedgerView
from lazarus.models.policy import Mode

UNREADABLE = (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError, ValueError)
"""What :func:`read_cluster_mode` raises when the mode cannot be read (ValueError: a memo that is not a mode)."""


async def read_cluster_mode(client: Client, ledger_workflow_id: str, timeout: timedelta) -> ClusterMode:
    """The mode an operator set for the whole cluster (``mode`` None when none is set); raises when unreadable."""
    handle = client.get_workflow_handle(ledger_workflow_id)
    described = await handle.describe(rpc_timeout=timeout)
    memo = await described.memo()
    published = memo.get(names.CLUSTER_MODE_MEMO)
    if published is not None:
        return ClusterMode.model_validate(published)
    view = await handle.query(names.LEDGER_VIEW, result_type=LedgerView, rpc_timeout=timeout)
    return ClusterMode(mode=Mode(view.mode_override) if view.mode_override else None, set_by=view.mode_set_by)
