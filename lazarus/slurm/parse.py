"""Parsers from Slurm 22.05 text output (``scontrol show``, ``sacct -P``) to :mod:`lazarus.models.slurm`.

Every parser either returns complete models or raises
:class:`MalformedOutputError` quoting the offending text (shortened), so a
format change in a Slurm upgrade fails loudly at the first read instead of
producing jobs with silently empty fields.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime

import hostlist

from lazarus import hostlists
from lazarus.errors import shorten
from lazarus.models.slurm import JobSnapshot, JobState, NodeState, SacctRecord
from lazarus.models.spares import Reservation
from lazarus.slurm.errors import MalformedOutputError

# A field boundary in `scontrol show` output: whitespace, then a Slurm key, then '='.
_KEY = re.compile(r"(?:^|(?<=\s))([A-Z][A-Za-z0-9_:/]*)=")
_NULLS = frozenset({"", "(null)", "None", "N/A", "Unknown", "n/a"})
_SACCT_FIELDS = ("JobID", "State", "ExitCode", "NodeList", "Start", "End")
SACCT_FORMAT = ",".join(_SACCT_FIELDS)


def holdable(state: JobState) -> bool:
    """Whether Priority=0 means "held" in this state: pending, or still completing after a requeuehold."""
    return not state.finished and state is not JobState.RUNNING


def expand_nodes(text: str | None) -> list[str]:
    """Expand a Slurm hostlist as printed by Slurm; empty/``(null)`` gives []."""
    if text is None or text.strip() in _NULLS:
        return []
    return list(_expanded(text.strip()))


@functools.lru_cache(maxsize=1 << 14)
def _expanded(text: str) -> tuple[str, ...]:
    """A hostlist's nodes, remembered: every cycle's ``squeue`` prints the same lists for the same jobs (at 10,000
    jobs, expanding them again was a third of the scheduler query's parse)."""
    try:
        return tuple(hostlists.expand(text))
    except hostlist.BadHostlist:
        raise MalformedOutputError(f"Slurm printed a node list that is not a hostlist: {shorten(text)}") from None


# Fields whose value is free text (user- or admin-controlled, may contain spaces and
# "Key=" look-alikes). In `scontrol show` (multi-line) output each of them ends its
# line, so the value is the rest of that line: a comment such as "x Restarts=9
# StdOut=/etc/shadow" can never be mistaken for Slurm's own fields.
JOB_FREE_TEXT = frozenset(
    {"JobName", "Command", "WorkDir", "Comment", "AdminComment", "SystemComment", "StdErr", "StdIn", "StdOut"}
)
NODE_FREE_TEXT = frozenset({"OS", "Reason", "Comment", "Extra"})


def records(text: str) -> list[list[str]]:
    """Group `scontrol show` output into records: a record starts at an unindented line."""
    groups: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            groups.append([])
        elif not groups:
            raise MalformedOutputError(f"scontrol output starts with a continuation line: {shorten(line)}")
        groups[-1].append(line.strip())
    return groups


def key_values(lines: list[str], free_text: frozenset[str] = frozenset()) -> dict[str, str]:
    """Split the lines of one `scontrol show` record into fields.

    Values may contain spaces (``Reason=maint [root@...]``), so a field ends
    where the next ``Key=`` starts, except that a key in ``free_text`` takes the
    rest of its line. A repeated key is a malformed record: Slurm never prints
    one twice, so it would mean the line structure was not what we think.
    """
    fields: dict[str, str] = {}
    for line in lines:
        matches = list(_KEY.finditer(line))
        if not matches or matches[0].start() != 0:
            raise MalformedOutputError(f"expected 'Key=value ...' from scontrol, got: {shorten(line)}")
        for match, following in zip(matches, [*matches[1:], None], strict=False):
            key = match.group(1)
            end = len(line) if following is None or key in free_text else following.start()
            if key in fields:
                raise MalformedOutputError(f"scontrol printed {key}= twice in one record: {shorten(line)}")
            fields[key] = line[match.end() : end].strip()
            if key in free_text:
                break
    return fields


def _is_number(text: str) -> bool:
    """ASCII digits only, and few enough for int(): ``str.isdigit`` alone accepts '²' and 5000-digit strings."""
    return text.isascii() and text.isdigit() and len(text) <= 4300  # int()'s default limit on digits


def _local_time(text: str | None) -> datetime | None:
    """scontrol/sacct print naive local times; return them timezone-aware, or None for Unknown/None."""
    if text is None or text.strip() in _NULLS:
        return None
    try:
        return datetime.fromisoformat(text.strip()).astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 shifted past the calendar by the local zone
        raise MalformedOutputError(f"Slurm printed a time that is not ISO 8601: {shorten(text)}") from None


def _exit_code_pair(text: str) -> tuple[int, int]:
    """``3:0`` → (3, 0): exit code and signal as scontrol and sacct print them."""
    code, sep, signal = text.partition(":")
    if not sep or not _is_number(code) or not _is_number(signal):
        raise MalformedOutputError(f"expected an exit code like '3:0', got: {shorten(text)}")
    return int(code), int(signal)


# --------------------------------------------------------------------------- scontrol show job / node


def parse_scontrol_jobs(text: str) -> list[JobSnapshot]:
    """Jobs from ``scontrol show job [id]`` (multi-line records; see :data:`JOB_FREE_TEXT` for why not ``-o``)."""
    return [_job_from_fields(key_values(lines, JOB_FREE_TEXT)) for lines in records(text)]


def _job_from_fields(f: dict[str, str]) -> JobSnapshot:
    job_id = f.get("JobId", "")
    if not _is_number(job_id) or "JobState" not in f:
        raise MalformedOutputError(f"scontrol job record without JobId/JobState: {shorten(str(f))}")
    state = JobState.parse(f["JobState"])
    exit_code, exit_signal = _exit_code_pair(f.get("ExitCode", "0:0"))
    reason = f.get("Reason", "")
    return JobSnapshot(
        job_id=int(job_id),
        name=f.get("JobName", ""),
        user=f.get("UserId", "").split("(")[0],
        user_id=_uid(f.get("UserId", "")),
        partition=f.get("Partition", ""),
        state=state,
        state_reason="" if reason in _NULLS else reason,
        restarts=int(f["Restarts"]) if _is_number(f.get("Restarts", "")) else 0,
        nodes=expand_nodes(f.get("NodeList")),
        excluded_nodes=expand_nodes(f.get("ExcNodeList")),
        batch_host=None if f.get("BatchHost", "") in _NULLS else f["BatchHost"],
        exit_code=exit_code if state.finished else None,
        exit_signal=(exit_signal or None) if state.finished else None,
        comment="" if f.get("Comment", "") in _NULLS else f["Comment"],
        stdout_path=None if f.get("StdOut", "") in _NULLS else f["StdOut"],
        stderr_path=None if f.get("StdErr", "") in _NULLS else f["StdErr"],
        work_dir=None if f.get("WorkDir", "") in _NULLS else f["WorkDir"],
        start_time=_local_time(f.get("StartTime")) if state is not JobState.PENDING else None,
        end_time=_local_time(f.get("EndTime")) if state.finished else None,
        submit_time=_local_time(f.get("SubmitTime")),
        held=holdable(state) and f.get("Priority") == "0",
        priority=int(f["Priority"]) if _is_number(f.get("Priority", "")) else None,
    )


def _uid(user_id: str) -> int | None:
    """The number in scontrol's ``UserId=alice(1000)``."""
    _, sep, rest = user_id.partition("(")
    number = rest.removesuffix(")")
    return int(number) if sep and number.isdigit() else None


def parse_scontrol_nodes(text: str) -> list[NodeState]:
    """Nodes from ``scontrol show node`` (multi-line records)."""
    nodes = []
    for lines in records(text):
        fields = key_values(lines, NODE_FREE_TEXT)
        if not fields.get("NodeName") or not fields.get("State"):
            raise MalformedOutputError(f"scontrol node record without NodeName/State: {shorten(lines[0])}")
        reason = fields.get("Reason", "")
        nodes.append(
            NodeState(
                name=fields["NodeName"],
                state=fields["State"],
                reason="" if reason in _NULLS else reason,
                address=fields.get("NodeAddr", ""),
                port=int(fields["Port"]) if fields.get("Port", "").isdigit() else None,
            )
        )
    return nodes


def parse_scontrol_reservations(text: str) -> list[Reservation]:
    """Reservations from ``scontrol show reservation`` (multi-line records); "No reservations in the
    system" is none."""
    if text.strip().startswith("No reservations"):
        return []
    found = []
    for lines in records(text):
        fields = key_values(lines)
        if not fields.get("ReservationName"):
            raise MalformedOutputError(f"scontrol reservation record without ReservationName: {shorten(lines[0])}")
        found.append(
            Reservation(
                name=fields["ReservationName"], nodes=expand_nodes(fields.get("Nodes")), state=fields.get("State", "")
            )
        )
    return found


# --------------------------------------------------------------------------- sacct -P -n -D


def parse_sacct(text: str) -> list[SacctRecord]:
    """Rows of ``sacct -P -n -D -o`` :data:`SACCT_FORMAT`, attempts and steps, in Slurm's order."""
    records = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cols = line.split("|")
        if len(cols) != len(_SACCT_FIELDS):
            raise MalformedOutputError(
                f"sacct row has {len(cols)} fields, expected {len(_SACCT_FIELDS)} ({SACCT_FORMAT}): {shorten(line)}"
            )
        job_id, state, exit_code, nodes, start, end = cols
        code, signal = _exit_code_pair(exit_code)
        records.append(
            SacctRecord(
                job_id=job_id,
                state=JobState.parse(state),
                exit_code=code,
                exit_signal=signal,
                nodes=[] if nodes in ("None assigned",) else expand_nodes(nodes),
                start_time=_local_time(start),
                end_time=_local_time(end),
            )
        )
    return records
