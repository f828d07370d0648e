"""A job's own costs per failure, measured from the milestones Lazarus recorded (issue 12 item 3).

`lazarus goodput` models each failure's downtime as the time until the job runs again, the queue wait, the
restart cost and half a checkpoint interval. The last three are the job's own, and the milestones of its
recovered attempts (``lazarus show --json``, key ``milestones``; docs/milestones.md) measure two of them:

- **queue wait**: requeued → running, less the requeue delay every case already counts (``Latencies.requeue``:
  Slurm's requeue → running on an idle cluster), never below 0;
- **restart cost**: running → progress restored (launch, rendezvous, checkpoint load, warm-up).

Each is the median over the recovered attempts that have both of its milestones. Pure: documents in, one
:class:`MeasuredCosts` out; reading files is the CLI's part.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lazarus.errors import LazarusError
from lazarus.models.recovery import AttemptMilestones


class MilestonesUnreadable(LazarusError):
    """The milestone input is not what ``lazarus show --json`` prints, or it holds no recovered attempt."""


class Sample(BaseModel):
    """One measured cost: how many recovered attempts gave it, and their median and worst."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(ge=1)
    median: float = Field(ge=0)
    worst: float = Field(ge=0)


class MeasuredCosts(BaseModel):
    """What the milestones measured; ``None`` where no recovered attempt had both milestones of a cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    recoveries: int = Field(ge=1, description="recovered attempts (rows with a fault) read")
    queue_wait: Sample | None = Field(description="requeued → running, less the requeue delay, seconds")
    restart_cost: Sample | None = Field(description="running → progress restored, seconds")
    steps_lost: Sample | None = Field(description="steps trained again per recovery")


def rows_of(text: str, source: str) -> list[AttemptMilestones]:
    """The milestone rows in one input: a ``lazarus show --json`` document, several (JSON lines or a JSON
    list), or bare milestone rows."""
    rows: list[AttemptMilestones] = []
    for document in _documents(text, source):
        for raw in _raw_rows(document, source):
            try:
                rows.append(AttemptMilestones.model_validate(raw))
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(part) for part in problem["loc"])
                raise MilestonesUnreadable(
                    f"{source}: a milestone row is not valid ({where}: {problem['msg']})"
                ) from None
    return rows


def measure(rows: Iterable[AttemptMilestones], requeue_delay: float, source: str) -> MeasuredCosts:
    """The costs the recovered attempts among ``rows`` measured (an attempt with a fault before it)."""
    recovered = [row for row in rows if row.fault_at is not None]
    if not recovered:
        raise MilestonesUnreadable(
            f"{source}: no recovered attempt (no milestone row with a fault): nothing to measure"
        )
    waits = [
        max(0.0, (row.running_at - row.requeued_at).total_seconds() - requeue_delay)
        for row in recovered
        if row.running_at is not None and row.requeued_at is not None
    ]
    starts = [
        max(0.0, (row.progress_restored_at - row.running_at).total_seconds())
        for row in recovered
        if row.progress_restored_at is not None and row.running_at is not None
    ]
    lost = [float(row.steps_lost) for row in recovered if row.steps_lost is not None]
    return MeasuredCosts(
        recoveries=len(recovered), queue_wait=_sample(waits), restart_cost=_sample(starts), steps_lost=_sample(lost)
    )


def _sample(values: list[float]) -> Sample | None:
    if not values:
        return None
    return Sample(n=len(values), median=statistics.median(values), worst=max(values))


def _documents(text: str, source: str) -> Iterator[Any]:
    stripped = text.strip()
    if not stripped:
        raise MilestonesUnreadable(f"{source}: empty; give what `lazarus show JOBID --json` prints")
    try:
        whole = json.loads(stripped)
    except json.JSONDecodeError:
        whole = None
    else:
        yield from whole if isinstance(whole, list) else [whole]
        return
    for number, line in enumerate(stripped.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise MilestonesUnreadable(f"{source}: line {number} is not JSON ({exc.msg})") from None


def _raw_rows(document: Any, source: str) -> list[Any]:
    if isinstance(document, dict) and "milestones" in document:
        rows = document["milestones"]
        if not isinstance(rows, list):
            raise MilestonesUnreadable(f"{source}: `milestones` is not a list")
        return rows
    if isinstance(document, dict) and "attempt" in document:
        return [document]
    raise MilestonesUnreadable(
        f"{source}: not a `lazarus show --json` document (no `milestones` key) nor a milestone row"
    )
