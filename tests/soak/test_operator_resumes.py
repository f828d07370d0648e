"""The soak's operator returns long-drained nodes to service through the ledger and repairs their fake GPUs, while
the observer keeps sampling: a drain that starts or ends during the operator's call never breaks its loop."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from benchmarks.soak.operator import Operator
from benchmarks.soak.stack import ChaosStack

LONG_AGO = datetime.now(UTC) - timedelta(minutes=5)


@dataclass
class Stack:
    cluster: str = "lzchaos"
    repaired: list[str] = field(default_factory=list)

    def repair_gpus(self, node: str) -> None:
        self.repaired.append(node)


@dataclass
class Ledger:
    """The ledger's handle: while a resume is in flight, the observer sees another node drained."""

    drained_since: dict[str, datetime]

    async def execute_update(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0)
        self.drained_since.setdefault("node4", datetime.now(UTC))


@dataclass
class Client:
    ledger: Ledger

    def get_workflow_handle(self, workflow_id: str) -> Ledger:
        return self.ledger


def test_a_drain_seen_while_a_resume_is_in_flight_is_left_for_the_next_round() -> None:
    drained_since = {"node2": LONG_AGO}
    stack = Stack()
    operator = Operator(cast(ChaosStack, stack), cast(Any, Client(Ledger(drained_since))), random.Random(1))
    asyncio.run(operator.resume_drained(drained_since))
    assert stack.repaired == ["node2"] and operator.resumes[0].endswith("node2 via the ledger")
    assert "node4" in drained_since and ("node4", drained_since["node4"]) not in operator.resumed_spells
