"""The Lazarus worker process of the embedded stack.

It runs ``python -m workers.main`` with ``LAZARUS_CONFIG`` pointing at the
``lazarus.yaml`` that ``dev up`` wrote, so it talks to this stack's Temporal
server and Slurm cluster. The worker entry point is optional: when
``workers.main`` is not importable the stack runs without it and says so.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

from lazarus.devstack.component import Component
from lazarus.devstack.layout import Layout

WORKER_MODULE = "workers.main"

# The worker has no port of its own; it counts as ready once it has survived
# its import and connection phase for this long.
SETTLE_S = 1.0


def workers_available() -> bool:
    try:
        return importlib.util.find_spec(WORKER_MODULE) is not None
    except ModuleNotFoundError:
        return False


def workers_component(layout: Layout, marker_env: dict[str, str]) -> Component:
    env = dict(os.environ)
    env.update(marker_env)
    env["LAZARUS_CONFIG"] = str(layout.lazarus_yaml)
    env["SLURM_CONF"] = str(layout.slurm_conf)

    def settled() -> bool:
        # The pid file is written at start, so its age is the process's age.
        try:
            return time.time() - layout.pid_file("workers").stat().st_mtime >= SETTLE_S
        except FileNotFoundError:
            return False

    return Component(
        name="workers",
        argv=[sys.executable, "-m", WORKER_MODULE],
        env=env,
        ready=settled,
        stop_grace=10.0,
    )
