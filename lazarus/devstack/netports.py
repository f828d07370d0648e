"""Keep the kernel from handing our daemon ports to other programs' outgoing connections.

Ports inside Linux's ephemeral range (``net.ipv4.ip_local_port_range``, 32768-60999
by default) can be picked as the *local* port of any outgoing connection or
``bind(port 0)``. The test clusters' ports (36817, 37001-37004, 46817, ...) lie
there, and on a busy machine slurmd then failed to start with "Address already
in use" although nothing listened on its port. Adding the ports to
``net.ipv4.ip_local_reserved_ports`` stops the kernel from choosing them
automatically; explicit binds (our daemons) still work. Only ports inside the
range are added, existing reservations are kept, and non-root users or
read-only ``/proc/sys`` simply skip this (start-up retries cover the rare clash).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from loguru import logger

PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
RESERVED = Path("/proc/sys/net/ipv4/ip_local_reserved_ports")


def _parse_ranges(text: str) -> set[int]:
    ports: set[int] = set()
    for part in text.replace("\n", "").split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        ports.update(range(int(lo), int(hi or lo) + 1))
    return ports


def reserve_ports(ports: Iterable[int]) -> list[int]:
    """Reserve those of ``ports`` inside the ephemeral range; return the ones newly reserved."""
    try:
        lo, hi = (int(x) for x in PORT_RANGE.read_text().split())
        current = RESERVED.read_text()
    except (OSError, ValueError):
        return []
    reserved = _parse_ranges(current)
    wanted = sorted(p for p in set(ports) if lo <= p <= hi and p not in reserved)
    if not wanted:
        return []
    value = ",".join(x for x in [current.strip(), *map(str, wanted)] if x)
    try:
        RESERVED.write_text(value + "\n")
    except OSError as exc:
        logger.debug("cannot reserve ports {}: {}", wanted, exc)
        return []
    logger.info("reserved ports {} against ephemeral use", wanted)
    return wanted
