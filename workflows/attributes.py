"""Typed search attributes of the job workflow, and the helpers that upsert them.

Operators filter on these in the Temporal UI and `lazarus jobs` lists from them
(visibility), never by querying every workflow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from workflows.effects import SearchAttributes

if TYPE_CHECKING:
    from lazarus.models.policy import Mode
    from lazarus.models.recovery import JobRecoveryInput

CLUSTER = SearchAttributeKey.for_keyword("LazarusCluster")
JOB_ID = SearchAttributeKey.for_int("SlurmJobId")
USER = SearchAttributeKey.for_keyword("SlurmUser")
PARTITION = SearchAttributeKey.for_keyword("SlurmPartition")
STATE = SearchAttributeKey.for_keyword("RecoveryState")
MODE = SearchAttributeKey.for_keyword("RecoveryMode")
SIGNATURE = SearchAttributeKey.for_keyword("LastSignature")
NODES = SearchAttributeKey.for_keyword_list("ImplicatedNodes")
ATTEMPT = SearchAttributeKey.for_int("AttemptIndex")
GENERATION = SearchAttributeKey.for_int("AdviceGeneration")


def upsert_job(state: JobRecoveryInput, mode: Mode) -> None:
    workflow.upsert_search_attributes(
        [
            CLUSTER.value_set(state.cluster),
            JOB_ID.value_set(state.job_id),
            USER.value_set(state.user or "unknown"),
            PARTITION.value_set(state.partition or "unknown"),
            STATE.value_set(state.state.value),
            MODE.value_set(mode.value),
        ]
    )


def upsert(change: SearchAttributes) -> None:
    """One upsert of the attributes an effect of the event path names (see :class:`SearchAttributes`)."""
    updates: list[SearchAttributeUpdate[Any]] = []
    if change.state is not None:
        updates.append(STATE.value_set(change.state.value))
    if change.mode is not None:
        updates.append(MODE.value_set(change.mode.value))
    if change.nodes is not None:
        updates.append(NODES.value_set(list(change.nodes)))
    if change.signature:
        updates.append(SIGNATURE.value_set(change.signature))
    if change.attempt is not None:
        updates.append(ATTEMPT.value_set(change.attempt))
    if change.generation is not None:
        updates.append(GENERATION.value_set(change.generation))
    workflow.upsert_search_attributes(updates)
