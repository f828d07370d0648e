"""Typed search attributes of the job workflow, and the helpers that upsert them.

Operators filter on these in the Temporal UI and `lazarus jobs` lists from them
(visibility), never by querying every workflow.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.common import SearchAttributeKey

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


def upsert_job(state, mode) -> None:
    workflow.upsert_search_attributes([
        CLUSTER.value_set(state.cluster), JOB_ID.value_set(state.job_id), USER.value_set(state.user or "unknown"),
        PARTITION.value_set(state.partition or "unknown"), STATE.value_set(state.state.value),
        MODE.value_set(mode.value),
    ])


def upsert_state(state) -> None:
    workflow.upsert_search_attributes([STATE.value_set(state.value)])


def upsert_mode(mode) -> None:
    workflow.upsert_search_attributes([MODE.value_set(mode.value)])


def upsert_signature(signature: str | None, nodes: list[str]) -> None:
    updates = [NODES.value_set(list(nodes))]
    if signature:
        updates.append(SIGNATURE.value_set(signature))
    workflow.upsert_search_attributes(updates)


def upsert_attempt(index: int) -> None:
    workflow.upsert_search_attributes([ATTEMPT.value_set(index)])


def upsert_generation(generation: int) -> None:
    workflow.upsert_search_attributes([GENERATION.value_set(generation)])
