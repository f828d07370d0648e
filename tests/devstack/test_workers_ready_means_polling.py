"""The stack counts a worker as ready only once Temporal sees it polling, by pid."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from lazarus.config import DevSettings
from lazarus.devstack.worker_procs import poller_pids
from tests.devstack.conftest import lazarus

pytestmark = [pytest.mark.temporal, pytest.mark.slurm, pytest.mark.slow]

WORKER = """
import asyncio, sys
from temporalio.client import Client
from temporalio.worker import Worker
from temporalio import activity

@activity.defn
async def noop() -> None: ...

async def main():
    client = await Client.connect(sys.argv[1])
    async with Worker(client, task_queue=sys.argv[2], activities=[noop]):
        await asyncio.sleep(60)

asyncio.run(main())
"""


def test_poller_pids_lists_a_polling_worker_and_not_an_idle_process(lzdev: None, tmp_path: Path) -> None:
    assert lazarus("dev", "up").returncode == 0
    dev = DevSettings(temporal_port=47233)
    queue = f"lz-ready-{time.time_ns()}"
    script = tmp_path / "w.py"
    script.write_text(WORKER)
    idle = subprocess.Popen(["sleep", "60"])
    worker = subprocess.Popen([sys.executable, str(script), "127.0.0.1:47233", queue])
    try:
        deadline = time.monotonic() + 30
        while worker.pid not in poller_pids(dev, queue) and time.monotonic() < deadline:
            time.sleep(0.3)
        pids = poller_pids(dev, queue)
        assert worker.pid in pids
        assert idle.pid not in pids
    finally:
        for p in (worker, idle):
            p.kill()
            p.wait()
