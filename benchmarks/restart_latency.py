"""Restart-with-exclusions latency on a real Slurm cluster: first command → job running on other nodes.

Each run submits a 2-node job, waits until it runs, then times
``SlurmClient.restart_excluding`` (requeuehold → update ExcNodeList → release
→ verified running elsewhere) excluding one of the job's nodes. It also
records when ``release`` returned, so the share of Slurm's own requeue delay
(BeginTime = now + cred_expire + 1, then the next scheduler pass) is visible.

    .venv/bin/python benchmarks/restart_latency.py --slurm-conf /var/tmp/lazarus-test/etc/slurm.conf --runs 10

Without ``--slurm-conf`` the scheduler settings (``LAZARUS_CONFIG`` /
``LAZARUS_*``) decide where commands run, so it also measures the SSH transport.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lazarus.config import load_settings
from lazarus.models.slurm import JobState, RestartRequest, SubmitRequest
from lazarus.slurm.client import SlurmClient, build_transport
from lazarus.slurm.transport import CommandResult, LocalTransport, Transport

JOB = "#!/bin/bash\nsrun sleep 600\n"


class Timestamps(Transport):
    """Passes commands through and remembers when the last ``release`` finished."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.released_at = 0.0

    @property
    def description(self) -> str:
        return self.inner.description

    async def run(self, argv: list[str], timeout: float) -> CommandResult:
        result = await self.inner.run(argv, timeout)
        if argv[:2] == ["scontrol", "release"]:
            self.released_at = time.monotonic()
        return result

    async def close(self) -> None:
        await self.inner.close()


async def submit_running(client: SlurmClient, workdir: Path) -> int:
    script = workdir / "job.sh"
    script.write_text(JOB)
    args = ["-N2", "-t", "5", "-o", str(workdir / "%j.out"), "-D", str(workdir), str(script)]
    job_id = (await client.submit(SubmitRequest(args=args))).job_id
    deadline = time.monotonic() + 120
    while (job := await client.job(job_id)).state is not JobState.RUNNING:
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job_id} did not start within 120 s (state {job.state})")
        await asyncio.sleep(0.2)
    return job_id


async def one_run(client: SlurmClient, stamps: Timestamps, workdir: Path) -> dict[str, float | str]:
    job_id = await submit_running(client, workdir)
    try:
        bad = (await client.job(job_id)).nodes[-1]
        started = time.monotonic()
        result = await client.restart_excluding(
            RestartRequest(job_id=job_id, expected_attempt=0, exclude_nodes=[bad], wait_running_s=120)
        )
        total = time.monotonic() - started
        assert result.state is JobState.RUNNING and bad not in result.nodes and result.new_attempt == 1
        return {
            "job_id": job_id,
            "excluded": bad,
            "released_s": stamps.released_at - started,
            "running_s": total,
            "nodes": ",".join(result.nodes),
        }
    finally:
        await client.run(["scancel", str(job_id)], f"job {job_id}")


async def main(args: argparse.Namespace) -> int:
    inner = LocalTransport(Path(args.slurm_conf)) if args.slurm_conf else build_transport(load_settings().scheduler)
    stamps = Timestamps(inner)
    client = SlurmClient(stamps, verify_timeout=60)
    runs = []
    with tempfile.TemporaryDirectory(prefix="lazarus-bench-", dir="/tmp") as tmp:
        for index in range(args.runs):
            run = await one_run(client, stamps, Path(tmp))
            runs.append(run)
            print(
                f"run {index + 1:2d}: job {run['job_id']} excluded {run['excluded']:>6}  "
                f"released {run['released_s']:5.2f} s  running on {run['nodes']} {run['running_s']:5.2f} s",
                file=sys.stderr,
            )
    await client.close()
    summary = {
        key: {"median": statistics.median(r[key] for r in runs), "worst": max(r[key] for r in runs)}
        for key in ("released_s", "running_s")
    }
    print(
        json.dumps({"runs": len(runs), "transport": inner.description, **summary}, indent=2)
        if args.json
        else f"{len(runs)} runs over {inner.description}: first command → running elsewhere: "
        f"median {summary['running_s']['median']:.2f} s, worst {summary['running_s']['worst']:.2f} s; "
        f"→ released: median {summary['released_s']['median']:.2f} s, worst {summary['released_s']['worst']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slurm-conf", help="run Slurm commands locally with this SLURM_CONF")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    sys.exit(asyncio.run(main(parser.parse_args())))
