"""The Slurm daemons of the embedded cluster and the checks that say it is usable.

All daemons run in the foreground as root (``SlurmUser=root``), with
``SLURM_CONF`` pointing at our generated file. Debian's slurmd is built with
MULTIPLE_SLURMD, so N ``slurmd -N nodeX`` processes on one host make N real
nodes on their own ports.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import time

from lazarus.config import DevSettings
from lazarus.devstack.component import Component, port_open
from lazarus.devstack.layout import Layout
from lazarus.devstack.slurm_conf import node_names, node_port
from lazarus.errors import DevStackError, shorten

# Node states (sinfo %t, lower case) in which a node takes or runs jobs.
USABLE_NODE_STATES = {"idle", "alloc", "mix", "comp", "drain", "drng", "resv", "plnd"}


def _sbin(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def client_env(layout: Layout, base: dict[str, str]) -> dict[str, str]:
    """Environment for Slurm client commands against this cluster.

    A ``SLURM_JWT`` left in the caller's environment switches clients to JWT
    auth, which this cluster does not offer, so it is dropped.
    """
    env = {k: v for k, v in base.items() if k != "SLURM_JWT"}
    env["SLURM_CONF"] = str(layout.slurm_conf)
    return env


def run_client(argv: list[str], env: dict[str, str], timeout: float = 15.0) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"{argv[0]} timed out after {timeout} s")


def ctld_answers(env: dict[str, str]) -> bool:
    proc = run_client(["scontrol", "ping"], env, timeout=10)
    return proc.returncode == 0 and " is UP" in proc.stdout


def node_states(env: dict[str, str]) -> dict[str, str]:
    """node name -> sinfo state (``idle``, ``down*``, ...); {} when sinfo fails."""
    proc = run_client(["sinfo", "-h", "-N", "-o", "%N %t"], env, timeout=10)
    if proc.returncode != 0:
        return {}
    states = {}
    for line in proc.stdout.splitlines():
        name, _, state = line.partition(" ")
        states[name] = state.strip()
    return states


def slurm_components(dev: DevSettings, layout: Layout, env: dict[str, str]) -> list[Component]:
    """slurmdbd (if accounting), slurmctld and one slurmd per node, in start order."""
    comps = []
    if dev.accounting:
        comps.append(
            Component(
                name="slurmdbd",
                argv=[_sbin("slurmdbd"), "-D"],
                env=env,
                port=dev.slurmdbd_port,
                ready=lambda: port_open(dev.slurmdbd_port),
            )
        )
    comps.append(
        Component(
            name="slurmctld",
            argv=[_sbin("slurmctld"), "-D"],
            env=env,
            port=dev.slurmctld_port,
            ready=lambda: ctld_answers(env),
            stop_grace=10.0,
        )
    )
    for i, node in enumerate(node_names(dev), start=1):
        port = node_port(dev, i)
        comps.append(
            Component(
                name=f"slurmd-{node}",
                argv=[_sbin("slurmd"), "-D", "-N", node],
                env=env,
                port=port,
                ready=functools.partial(port_open, port),
            )
        )
    return comps


def wait_cluster_ready(dev: DevSettings, env: dict[str, str], timeout: float = 60.0) -> None:
    """Wait until every node responds and, with accounting, sacct answers.

    A node that slurmctld still marks ``*`` (not responding) or ``unk``/``down``
    cannot run jobs yet; a test that submits then would wait for a scheduler
    pass or fail, so ``up`` returns only once all nodes are usable.
    """
    deadline = time.monotonic() + timeout
    want = set(node_names(dev))
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        states = node_states(env)
        if want <= states.keys() and all(states[n] in USABLE_NODE_STATES for n in want):
            break
        time.sleep(0.2)
    else:
        raise DevStackError(f"Slurm nodes did not become usable within {timeout:.0f} s: {states or 'sinfo failed'}")
    if dev.accounting:
        _wait_sacct(env, deadline)


def _wait_sacct(env: dict[str, str], deadline: float) -> None:
    proc = None
    while time.monotonic() < deadline:
        proc = run_client(["sacct", "-n", "-X", "-o", "JobID", "-S", "now-1minutes"], env, timeout=10)
        if proc.returncode == 0 and "error" not in proc.stderr.lower():
            return
        time.sleep(0.3)
    detail = shorten(proc.stderr.strip()) if proc else "no answer"
    raise DevStackError(f"sacct does not answer (slurmdbd or MariaDB not working): {detail}")
