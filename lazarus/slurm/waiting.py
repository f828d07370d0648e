"""Polling until fresh Slurm state shows what an action intended.

Slurm applies most changes asynchronously (a requeued job passes through
COMPLETING, a released job waits for the next scheduler pass), so verifying
an action means reading again until the state converges or a deadline
passes. Each poll reports progress through ``heartbeat`` so a Temporal
activity keeps heartbeating while it waits, and a dead worker is noticed in
the heartbeat timeout rather than the much longer start-to-close timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from lazarus.slurm.errors import VerificationError

T = TypeVar("T")
Heartbeat = Callable[[str], None]


def no_heartbeat(_: str) -> None:
    """Default heartbeat for callers outside an activity."""


async def wait_for(
    read: Callable[[], Awaitable[T]],
    done: Callable[[T], bool],
    *,
    timeout: float,
    what: str,
    heartbeat: Heartbeat = no_heartbeat,
    interval: float = 0.25,
) -> T:
    """Call ``read`` until ``done(value)``; return that value.

    Raises :class:`VerificationError` (retryable) naming ``what`` and the last
    value seen when ``timeout`` passes: the action may still converge later,
    and a retry re-reads state before doing anything.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        heartbeat(f"waiting: {what}")  # after every read, the last one too: one command per heartbeat
        if done(value):
            return value
        if time.monotonic() >= deadline:
            raise VerificationError(f"not verified within {timeout:g} s: {what} (last seen: {_describe(value)})")
        await asyncio.sleep(interval)


def _describe(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "..."
