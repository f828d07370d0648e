"""The Lazarus worker process of the embedded stack.

It runs ``python -m workers.host`` with ``LAZARUS_CONFIG`` pointing at the
``lazarus.yaml`` that ``dev up`` wrote, so it talks to this stack's Temporal
server and Slurm cluster. The worker entry point is optional: when
``workers.host`` is not importable the stack runs without it and says so.

Ready means "polling": Temporal lists a poller on the control task queue whose
identity is ``<pid>@<host>`` (the SDK's default identity). A worker that
crashes while importing or connecting therefore fails ``dev up`` with its log,
instead of being reported as started.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

from lazarus.config import DevSettings, TaskQueues
from lazarus.devstack import procs
from lazarus.devstack.component import Component
from lazarus.devstack.layout import MARKER_ENV, Layout
from lazarus.devstack.temporal import temporal_binary

WORKER_MODULE = "workers.host"


def workers_available() -> bool:
    try:
        return importlib.util.find_spec(WORKER_MODULE) is not None
    except ModuleNotFoundError:
        return False


def poller_pids(dev: DevSettings, task_queue: str) -> set[int]:
    """Pids of processes on this host polling ``task_queue`` (from their Temporal identity)."""
    try:
        proc = subprocess.run(
            [
                str(temporal_binary()),
                "task-queue",
                "describe",
                "--task-queue",
                task_queue,
                "--address",
                f"127.0.0.1:{dev.temporal_port}",
                "-o",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
        pollers = json.loads(proc.stdout).get("pollers") or []
    except (subprocess.TimeoutExpired, ValueError):
        return set()
    pids = set()
    for poller in pollers:
        head = poller.get("identity", "").split("@", 1)[0]
        if head.isdigit():
            pids.add(int(head))
    return pids


def workers_component(dev: DevSettings, layout: Layout, marker: str) -> Component:
    env = dict(os.environ)
    env[MARKER_ENV] = marker
    env["LAZARUS_CONFIG"] = str(layout.lazarus_yaml)
    env["SLURM_CONF"] = str(layout.slurm_conf)
    control_queue = TaskQueues().for_cluster(dev.cluster_name).control

    def polling() -> bool:
        pid = procs.marked_pid(layout.pid_file("workers"), marker)
        return pid is not None and pid in poller_pids(dev, control_queue)

    return Component(
        name="workers",
        argv=[sys.executable, "-m", WORKER_MODULE],
        env=env,
        ready=polling,
        stop_grace=10.0,
    )
