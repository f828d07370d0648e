"""The node agent's poll loop: read NVML, remember Xids, keep the latest verdict.

NVML delivers each Xid event once, so the agent keeps them (per GPU, for the
``xid_window``) to let a fatal Xid fail the node for longer than one poll. The
latest :class:`NodeHealth` and the Xid totals are swapped in whole, so the
metrics endpoint (another thread) always reads one consistent snapshot.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

from loguru import logger
from pynvml import NVMLError

from lazarus.health.assess import HealthThresholds, assess_node
from lazarus.health.models import NodeHealth, XidEvent
from lazarus.health.nvml import NvmlReader


def utc_now() -> datetime:
    return datetime.now(UTC)


class NodeAgent:
    def __init__(
        self,
        reader: NvmlReader,
        node: str,
        limits: HealthThresholds | None = None,
        expected_gpus: int | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.reader = reader
        self.node = node
        self.limits = limits or HealthThresholds()
        self.expected_gpus = expected_gpus
        self._clock = clock
        self._xids: dict[int, list[XidEvent]] = {}
        self.xid_counts: Counter[tuple[int, str, int]] = Counter()  # (gpu, uuid, xid) -> events since start
        # What the metrics thread reads: replaced whole after each poll, never mutated in place.
        self.xid_totals: tuple[tuple[tuple[int, str, int], int], ...] = ()
        self.poll_errors = 0
        self.latest: NodeHealth | None = None

    def poll(self) -> NodeHealth:
        """Read every GPU once, fold in new Xid events, and publish the verdict."""
        now = self._clock()
        for event in self.reader.drain_xid_events(now):
            logger.warning("node {} gpu {} ({}): Xid {}", self.node, event.gpu, event.uuid, event.xid)
            self._xids.setdefault(event.gpu, []).append(event)
            self.xid_counts[(event.gpu, event.uuid, event.xid)] += 1
        self.xid_totals = tuple(sorted(self.xid_counts.items()))
        gpus = [g.model_copy(update={"xid_events": self._xids.get(g.index, [])}) for g in self.reader.read_gpus()]
        health = assess_node(
            self.node, gpus, now, self.limits, driver_version=self.reader.driver_version,
            expected_gpus=self.expected_gpus,
        )  # fmt: skip
        # assess_node dropped the Xids older than the window; forget them here too.
        self._xids = {g.index: g.xid_events for g in health.gpus if g.xid_events}
        if self.latest is None or health.verdict != self.latest.verdict:
            summary = "; ".join(health.reasons) or "no findings"
            logger.info("node {} is {}: {}", self.node, health.verdict.value, summary)
        self.latest = health
        return health

    def run(self, interval_s: float, stop: threading.Event) -> None:
        """Poll every ``interval_s`` until ``stop`` is set.

        A failing poll (the driver went away mid-run, say) is logged and counted
        in ``lazarus_node_agent_poll_errors_total``; the last good snapshot stays
        published so the endpoint keeps answering, and the next poll tries again.
        """
        while not stop.is_set():
            try:
                self.poll()
            except NVMLError as exc:
                self.poll_errors += 1
                logger.error("node {}: NVML poll failed: {}", self.node, exc)
            stop.wait(interval_s)
