"""The telemetry lease: which telemetry replica runs the cluster's telemetry loop, and where it was in the logs.

One ``TelemetryLeaseWorkflow`` per cluster (id from :func:`lazarus.models.names.telemetry_lease_id`) grants
the lease to one holder at a time until it expires. The holder renews it every few seconds and sends
along the log offsets whose lines have all reached the job workflows, so the replica that takes over
(another pod, after a crash) reads on from there instead of from the start or the end of each file.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field

# The lease workflow keeps at most this many files' offsets (the most recently saved); about 300 bytes
# each, so its state stays well inside one Temporal payload. A job whose offsets were dropped is read as a
# newly seen job is: a first attempt from the start of its file, a requeued one from the end.
MAX_SAVED_OFFSETS = 2000
# A renewal carries at most this many changed offsets; the rest follow with the next renewals.
MAX_OFFSETS_PER_RENEWAL = 250
# Longer paths are not saved (the file is then read as a newly seen job's).
MAX_SAVED_PATH = 1024
MAX_HANDOVERS = 20
MIN_TTL, MAX_TTL = timedelta(seconds=1), timedelta(minutes=10)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LogOffset(_Model):
    """Where reading one job output file stands, saved at the start of a line (no partial line kept)."""

    inode: int | None = None
    device: int | None = None
    offset: int = Field(0, ge=0, description="bytes consumed: the start of the first line not yet read")
    line_no: int = Field(0, ge=0, description="lines ended by a newline before ``offset``")
    skipping: bool = Field(False, description="inside an overlong line whose start was already read")
    attempt: int | None = Field(None, ge=0, description="the job's attempt whose progress the fields below give")
    last_progress_at: datetime | None = Field(
        None, description="when the holder read that attempt's last progress line (the hang clock's start)"
    )
    step: int | None = Field(None, description="the step of that line")


class LeaseRequest(_Model):
    """Acquire (``epoch`` None), renew or release the lease; offsets whose lines all reached the workflows."""

    holder: str = Field(min_length=1, max_length=200, description="the replica: host, process and a nonce")
    ttl: timedelta = Field(ge=MIN_TTL, le=MAX_TTL, description="the lease lasts this long after this request")
    epoch: int | None = Field(None, ge=1, description="the term being renewed or released (None: acquire)")
    offsets: dict[str, LogOffset] = Field(default_factory=dict, max_length=MAX_OFFSETS_PER_RENEWAL)
    forget: list[str] = Field(
        default_factory=list,
        max_length=MAX_OFFSETS_PER_RENEWAL,
        description="files no longer watched (their jobs left Slurm)",
    )


class LeaseGrant(_Model):
    """The lease as granted: one term (``epoch``) of one holder, until ``expires_at`` (workflow time)."""

    holder: str
    epoch: int
    expires_at: datetime
    offsets: dict[str, LogOffset] = Field(default_factory=dict, description="saved offsets (acquire only)")


class Handover(_Model):
    """One term's start, kept for operators (``lazarus``'s view of the lease)."""

    holder: str
    epoch: int
    at: datetime
    previous: str | None = Field(None, description="the holder before, if its term had not been released")


class LeaseState(_Model):
    """The lease workflow's whole state (its input, carried across continue-as-new)."""

    cluster: str
    holder: str | None = None
    epoch: int = 0
    expires_at: datetime | None = None
    offsets: dict[str, LogOffset] = Field(default_factory=dict)
    handovers: list[Handover] = Field(default_factory=list)
    history_limit: int = Field(
        4000,
        ge=20,
        description="continue as new after this many history events (or "
        "sooner, when Temporal suggests it: a long or large history)",
    )


class LeaseView(_Model):
    """What the lease workflow's query answers."""

    cluster: str
    holder: str | None
    epoch: int
    expires_at: datetime | None
    saved_offsets: int
    handovers: list[Handover]
