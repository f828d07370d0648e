"""Hot-spare pools: a Slurm reservation a policy names, kept at its size with healthy nodes.

A policy's ``spares`` names the reservation and how many of its nodes are spares. When Lazarus excludes
or drains a node of the reservation, the node ledger asks the Slurm adapter to swap it for a healthy idle
node of the general pool (:class:`RefillRequest`); the adapter reads the reservation fresh, acts only if
needed and verifies (:class:`RefillResult`). The ledger keeps each pool's state (:class:`SparePoolState`),
shown by `lazarus spares`.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

RESERVATION_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""The reservation names Lazarus accepts (passed to `scontrol` as data; no spaces or shell characters)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SparePool(_Model):
    """A policy's spare pool: the reservation its jobs run in and how many of its nodes are spares."""

    reservation: str = Field(pattern=RESERVATION_NAME, description="the Slurm reservation Lazarus keeps healthy")
    count: int = Field(1, ge=0, le=1024, description="how many of the reservation's nodes are spares")
    retry_interval: timedelta = Field(
        timedelta(seconds=60),
        gt=timedelta(0),
        description="when no healthy node is free, look again this often (the ledger's own timer)",
    )


class Reservation(_Model):
    """One reservation as `scontrol show reservation` prints it."""

    name: str
    nodes: list[str] = Field(default_factory=list)
    state: str = Field("", description="ACTIVE or INACTIVE")


class RefillRequest(_Model):
    """Swap the reservation's untrusted members for healthy idle nodes of the general pool."""

    reservation: str = Field(pattern=RESERVATION_NAME)
    distrusted: list[str] = Field(
        default_factory=list,
        description="nodes the ledger distrusts (implicated, drained, waiting): taken out of the reservation, "
        "never taken in",
    )


class Swap(_Model):
    """One member replaced: ``out`` left the reservation, ``into`` took its place."""

    out: str
    into: str


class RefillResult(_Model):
    """What the adapter found and did (read fresh, acted if needed, verified)."""

    reservation: str
    members: list[str] = Field(description="the reservation's nodes after the call")
    swaps: list[Swap] = Field(default_factory=list, description="members replaced by this call")
    short: list[str] = Field(
        default_factory=list, description="untrusted members still in the reservation: no healthy node was free"
    )
    idle: list[str] = Field(default_factory=list, description="trusted members idle now (spares free)")


class SparePoolState(_Model):
    """The ledger's record of one pool, from its last refill check."""

    reservation: str
    count: int = Field(ge=0, description="spares the policy asks for")
    members: list[str] = Field(default_factory=list)
    spares_free: int = Field(0, description="trusted members idle at the last check (at most count)")
    spares_used: int = Field(0, description="spares taken by work or lost: count - spares_free")
    refills: int = Field(0, description="members replaced from the general pool since the ledger started")
    swaps: list[str] = Field(default_factory=list, description="the newest replacements, e.g. 'node1 -> node4 at ...'")
    short: list[str] = Field(default_factory=list, description="untrusted members waiting for a free healthy node")
    short_since: datetime | None = None
    checked_at: datetime | None = None
    error: str | None = Field(None, description="why the last check failed (reservation unknown, scheduler down)")
