"""The soak's observer stamps what Slurm shows with when Slurm showed it: a read during a controller outage answers
only once slurmctld is back, with the state of that moment, so a hold it reports is dated by the answer (and the
moment it asked is kept, for the deadline check)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from benchmarks.soak.observer import Observer
from benchmarks.soak.stack import ChaosStack

OUTAGE_S = 0.3


@dataclass
class SlowSlurm:
    """squeue and sinfo that answer only after the controller's outage."""

    async def jobs(self) -> list[Any]:
        await asyncio.sleep(OUTAGE_S)
        held = SimpleNamespace(job_id=7, user="root", state="PENDING", held=True, state_reason="JobHeldUser")
        return [SimpleNamespace(**vars(held), excluded_nodes=[])]

    async def nodes(self) -> list[Any]:
        return []


def test_a_hold_read_during_a_controller_outage_is_dated_by_slurms_answer() -> None:
    stack = SimpleNamespace(slurm_conf=Path("/nonexistent/slurm.conf"), cluster="lzchaos")
    observer = Observer(cast(ChaosStack, stack), cast(Any, None), {7})
    observer.reader = cast(Any, SlowSlurm())
    asked = datetime.now(UTC)
    asyncio.run(observer.sample())
    [sample] = observer.held
    assert sample.asked_at is not None and sample.asked_at - asked < timedelta(seconds=OUTAGE_S / 2)
    assert sample.at - asked >= timedelta(seconds=OUTAGE_S)
