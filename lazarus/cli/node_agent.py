"""`lazarus node-agent`: GPU health from NVML, served as Prometheus metrics or printed once.

    lazarus node-agent                    # serve on :9400, poll every 10 s
    lazarus node-agent --once --json      # print one NodeHealth snapshot and exit

Exit codes: 0 done (``--once``: whatever the verdict, it is in the output),
2 bad usage, 3 NVML not available on this machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from loguru import logger

from lazarus.cli import exits
from lazarus.cli.common import json_option
from lazarus.errors import LazarusError
from lazarus.health.agent import NodeAgent
from lazarus.health.assess import HealthThresholds
from lazarus.health.models import NodeHealth
from lazarus.health.nvml import NvmlReader, NvmlUnavailableError

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(subparsers: Subcommands) -> None:
    p = subparsers.add_parser(
        "node-agent",
        help="export GPU health (NVML) as Prometheus metrics",
        description="Read GPU health through NVML and serve it as Prometheus metrics with DCGM-compatible names.",
    )
    p.add_argument("--port", type=int, default=9400, help="metrics port (default 9400, as dcgm-exporter)")
    p.add_argument("--address", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between NVML polls (default 10)")
    p.add_argument("--once", action="store_true", help="poll once, print the snapshot and exit")
    json_option(p, "the NodeHealth snapshot (with --once)")
    p.add_argument("--node", help="node name (default: $SLURMD_NODENAME, else the host name)")
    p.add_argument("--expect-gpus", type=int, help="GPUs the node should have; fewer fails the node")
    p.add_argument("--xid-window", type=float, default=3600.0, help="seconds an Xid keeps counting (default 3600)")
    p.add_argument("--nvml-library", type=Path, help="explicit libnvidia-ml.so.1 path (default: the loader's)")
    p.set_defaults(func=run)
    exits.declare(p, {NvmlUnavailableError.exit_code: "NVML is not available on this machine"})


def node_name(explicit: str | None) -> str:
    """``--node``, else Slurm's name for this node, else the short host name."""
    return explicit or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def run(args: argparse.Namespace) -> int:
    if args.json and not args.once:
        raise LazarusError("--json needs --once (the long-running agent serves metrics instead)")
    if args.interval <= 0:
        raise LazarusError(f"--interval must be positive, got {args.interval}")
    limits = HealthThresholds(xid_window=timedelta(seconds=args.xid_window))
    with NvmlReader(args.nvml_library) as reader:
        agent = NodeAgent(reader, node_name(args.node), limits, expected_gpus=args.expect_gpus)
        if args.once:
            _print(agent.poll(), as_json=args.json)
            return 0
        return _serve(agent, args)


def _serve(agent: NodeAgent, args: argparse.Namespace) -> int:
    from prometheus_client import start_http_server

    from lazarus.health.metrics import build_registry

    agent.poll()  # the first scrape should already see data
    try:
        server, _ = start_http_server(args.port, addr=args.address, registry=build_registry(agent))
    except OSError as exc:
        raise LazarusError(f"cannot listen on {args.address}:{args.port}: {exc.strerror}") from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    logger.info("node-agent for {} serving metrics on {}:{}", agent.node, args.address, args.port)
    try:
        agent.run(args.interval, stop)
    finally:
        server.shutdown()
    return 0


def _print(health: NodeHealth, as_json: bool) -> None:
    if as_json:
        print(health.model_dump_json())
        return
    print(f"{health.node}: {health.verdict.value} ({health.gpu_count} GPUs, driver {health.driver_version or '?'})")
    for reason in health.reasons:
        print(f"  - {reason}")
    for g in health.gpus:
        unknown = f"; unknown: {', '.join(sorted(g.unknown_fields))}" if g.unknown_fields else ""
        print(f"  gpu {g.index} {g.uuid} {g.name or '?'}: {g.verdict.value}{unknown}")
    sys.stdout.flush()
