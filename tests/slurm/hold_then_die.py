"""Child process for the crash spec: runs restart-with-exclusions and stops dead right after ``requeuehold``.

Usage: python -m tests.slurm.hold_then_die SLURM_CONF JOB_ID EXPECTED_ATTEMPT NODE

It prints ``HELD`` once Slurm has accepted the requeuehold and then waits
forever, so the test can kill -9 it at exactly the moment between
``requeuehold`` and ``release``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lazarus.models.slurm import RestartRequest
from lazarus.slurm.client import SlurmClient
from lazarus.slurm.transport import CommandResult, LocalTransport


class StopAfterHold(LocalTransport):
    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        result = await super().run(argv, timeout)
        if argv[:2] == ["scontrol", "requeuehold"] and result.ok:
            print("HELD", flush=True)
            await asyncio.Event().wait()
        return result


async def main(slurm_conf: str, job_id: str, expected_attempt: str, node: str) -> None:
    client = SlurmClient(StopAfterHold(Path(slurm_conf)))
    await client.restart_excluding(
        RestartRequest(job_id=int(job_id), expected_attempt=int(expected_attempt), exclude_nodes=[node])
    )


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
