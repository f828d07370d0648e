"""A job that swaps its output file for a link to a secret: telemetry refuses to read it, the refusal is
a note on the job (workflow status and `lazarus show`), and the secret's Xid line never becomes an anomaly
(issue 8, item 5)."""

from __future__ import annotations

import json

import pytest

from lazarus.models.recovery import RecoveryState
from tests.conftest import assert_eventually, submit_job
from tests.e2e.helpers import lazarus_cli, restarts
from tests.e2e.stack import JOB_PREFIX, POLICY

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slurm, pytest.mark.temporal]


async def test_an_output_file_swapped_for_a_symlink_is_refused_and_noted_on_the_job(e2e, job_dir, tmp_path_factory):
    secret = tmp_path_factory.mktemp("secret") / "shadow"
    secret.write_text("root:$6$hash:1::::::\nMay 1 12:00:03 node4 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1\n")
    secret.chmod(0o600)
    out = job_dir / "hostile.out"
    script = f"echo started\nsleep 3\nrm -f {out}\nln -s {secret} {out}\nsleep 60\n"
    job = submit_job(
        e2e.cluster,
        script,
        output=str(out),
        job_name=f"{JOB_PREFIX}hostile",
        comment=json.dumps({"lazarus": {"policy": POLICY}}),
    )
    try:

        async def noted():
            status = await e2e.status(job)
            return status if status.telemetry_notes else None

        status = await assert_eventually(noted, timeout=40, interval=0.5)
        note = f"log not read: {out} is a symbolic link; Lazarus does not follow links to logs"
        assert status.telemetry_notes == [note], e2e.log_tail()
        assert status.state == RecoveryState.WATCHING and all(a.anomaly is None for a in status.attempts)
        assert f"  telemetry: {note}" in lazarus_cli(e2e, "show", str(job)).stdout
        assert restarts(e2e.cluster, job) == 0
        assert e2e.log_tail(lines=400).count(note) == 1  # logged once, not every cycle
    finally:
        e2e.cluster.run("scancel", str(job), check=False)
