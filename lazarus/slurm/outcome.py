"""Turn a failed Slurm command into the typed error it means.

Slurm's client tools report everything with exit status 1 and a sentence on
stderr, so the sentence is the only signal. The patterns below are the
messages Slurm 22.05 prints (seen on the local cluster); anything not
recognised becomes a retryable :class:`CommandFailedError` that still carries
the text, so an unexpected answer is visible and never silently ignored.
"""

from __future__ import annotations

import re

from lazarus.errors import shorten
from lazarus.slurm.errors import (
    CommandFailedError,
    ControllerUnreachableError,
    OperationRefusedError,
    PermissionDeniedError,
    SlurmError,
    UnknownJobError,
    UnknownNodeError,
)
from lazarus.slurm.transport import CommandResult

_UNREACHABLE = re.compile(
    r"Unable to contact slurm controller|Socket timed out on send/recv|Zero Bytes were transmitted"
    r"|Connection refused|Slurm backup controller in standby mode|Communication connection failure"
    r"|Unable to connect to database",
    re.IGNORECASE,
)
_UNKNOWN_JOB = re.compile(r"Invalid job id specified|Invalid job id", re.IGNORECASE)
_UNKNOWN_NODE = re.compile(r"Invalid node name specified|Node .* not found", re.IGNORECASE)
_PERMISSION = re.compile(r"Access/permission denied|Permission denied|Invalid user id|User not found", re.IGNORECASE)
_REFUSED = re.compile(
    r"Requested operation is presently disabled|Job is no longer pending execution|Job/step already completing"
    r"|Job has already finished|Only batch jobs|Job is pending execution|Requested operation not supported"
    r"|Duplicate job id|Job is current(ly)? held|invalid node state transition|Invalid node state specified",
    re.IGNORECASE,
)


def error_for(result: CommandResult, subject: str) -> SlurmError:
    """The typed error for a command that exited non-zero; ``subject`` names what it was about (``job 12``)."""
    text = result.stderr.strip() or result.stdout.strip() or f"exit status {result.returncode}"
    detail = shorten(text)
    command = " ".join(result.argv[:3])
    if _UNREACHABLE.search(text):
        return ControllerUnreachableError(
            f"Slurm controller unreachable while running {command} ({detail}); retrying later"
        )
    if _UNKNOWN_JOB.search(text):
        return UnknownJobError(f"Slurm does not know {subject} ({detail})")
    if _UNKNOWN_NODE.search(text):
        return UnknownNodeError(f"Slurm does not know {subject} ({detail})")
    if _PERMISSION.search(text):
        return PermissionDeniedError(f"permission denied for {command} on {subject} ({detail})")
    if _REFUSED.search(text):
        return OperationRefusedError(f"Slurm refused {command} for {subject}: {detail}")
    return CommandFailedError(f"{command} failed for {subject} with exit status {result.returncode}: {detail}")


def check(result: CommandResult, subject: str) -> CommandResult:
    """Return ``result`` when it succeeded, else raise the typed error it means."""
    if result.ok:
        return result
    raise error_for(result, subject)
