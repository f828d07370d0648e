"""End to end: the Temporal UI tells a recovered job's story. A real job crashes with an Xid 79 on the real Slurm
cluster and Lazarus recovers it; headless Chromium renders the UI page of the job's workflow, and the page's text
(DOM text, not pixels) shows whose job it is (the static summary and details), the events by their own signal
names, and the recovery (the restart excluding the node, the current details saying the job completed)."""

from __future__ import annotations

import asyncio
import getpass
import re
import shutil
import time
from pathlib import Path

import pytest

from lazarus.devstack.browser import embedded_markdown, rendered_dom, run_url, visible_text
from lazarus.models import names
from lazarus.models.recovery import RecoveryState
from tests.e2e.helpers import restore_nodes, wait_state
from tests.e2e.stack import JOB_PREFIX, E2EStack, submit_training

pytestmark = [
    pytest.mark.asyncio(loop_scope="session"),
    pytest.mark.slurm,
    pytest.mark.temporal,
    pytest.mark.skipif(shutil.which("chromium") is None, reason="the Debian 'chromium' package is not installed"),
]

USER = getpass.getuser()  # sbatch runs as the test's user
CRASH = dict(steps=12, ckpt_every=4, fault="xid79", fault_rank=1, fault_step=5, fault_attempts="0")


async def test_the_ui_pages_of_a_recovered_job_show_whose_job_it_is_its_signals_and_its_recovery(
    e2e: E2EStack, job_dir: Path
):
    job_id = submit_training(e2e.cluster, job_dir, **CRASH)
    try:
        final = await wait_state(
            e2e, job_id, RecoveryState.COMPLETED, RecoveryState.STOPPED, RecoveryState.FAILED, timeout=120
        )
    finally:
        restore_nodes(e2e.cluster)
    assert final.state == RecoveryState.COMPLETED, final.stop_reason
    handle = (await e2e.client()).get_workflow_handle(names.workflow_id("lztest", job_id))
    run_id = (await handle.describe()).run_id
    ui = f"http://127.0.0.1:{e2e.ui_port}"

    started = time.monotonic()
    timeline = visible_text(
        await asyncio.to_thread(rendered_dom, run_url(ui, "default", handle.id, run_id, "timeline"))
    )
    metadata = embedded_markdown(
        await asyncio.to_thread(rendered_dom, run_url(ui, "default", handle.id, run_id, "user-metadata"))
    )
    assert time.monotonic() - started < 40

    summary = rf"Slurm job {job_id} \({JOB_PREFIX}train\) of {USER}: [A-Z_]+ at start"  # as Slurm showed it when found
    assert re.fullmatch(summary, metadata["user-metadata-summary"]), metadata
    nodes = ",".join(final.attempts[0].nodes)
    details = metadata["user-metadata-details"]
    at_start = (f"**Nodes at start** {nodes} (2)", "**Nodes at start** none yet (pending)")  # a busy cluster queues it
    assert f"**User** `{USER}`" in details and any(n in details for n in at_start), details
    assert metadata["user-metadata-current-details"] == "completed: job completed in attempt 1"

    (failed,) = final.advice_history[0].exclude_nodes
    story = [  # the timeline's labels, in the order it lists them: signal names, activity and timer summaries
        r"\banomaly\b",  # (the first attempt_started may ride with the workflow's start, before the timeline's window)
        r"\battempt_ended\b",
        rf"slurm_restart_excluding • requeue job {job_id} excluding {failed}\b",
        r"\battempt_started\b",
        r"\bprogress\b",  # the new attempt's checkpoints
        r"\battempt_ended\b",
    ]
    assert re.search(".*".join(story), timeline), timeline[-2000:]
    assert names.JOB_EVENT not in timeline  # no generic envelope: each event is named for what it carries
