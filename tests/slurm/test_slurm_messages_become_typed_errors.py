"""Slurm's stderr sentences (as 22.05 prints them) map to typed errors with the right retryability."""

from __future__ import annotations

import pytest

from lazarus.slurm import errors
from lazarus.slurm.outcome import check, error_for
from lazarus.slurm.transport import CommandResult


def failed(stderr: str, argv: tuple[str, ...] = ("scontrol", "show", "job", "12")) -> CommandResult:
    return CommandResult(argv=list(argv), returncode=1, stderr=stderr)


@pytest.mark.parametrize(
    ("stderr", "expected", "retryable"),
    [
        (
            "slurm_load_jobs error: Unable to contact slurm controller (connect failure)",
            errors.ControllerUnreachableError,
            True,
        ),
        ("slurm_load_jobs error: Socket timed out on send/recv operation", errors.ControllerUnreachableError, True),
        ("slurm_load_jobs error: Invalid job id specified", errors.UnknownJobError, False),
        ("slurm_update error: Invalid node name specified", errors.UnknownNodeError, False),
        ("Invalid node name specified for job 3", errors.UnknownNodeError, False),
        ("slurm_update error: Access/permission denied", errors.PermissionDeniedError, False),
        ("Requested operation is presently disabled for job 12", errors.OperationRefusedError, False),
        ("slurm_update error: Job is no longer pending execution", errors.OperationRefusedError, False),
        ("Job is pending execution for job 3", errors.OperationRefusedError, False),
        ("You must specify a reason when DOWNING or DRAINING a node. Request denied", errors.CommandFailedError, True),
        ("", errors.CommandFailedError, True),
    ],
)
def test_message_maps_to_typed_error(stderr: str, expected: type, retryable: bool) -> None:
    error = error_for(failed(stderr), "job 12")
    assert type(error) is expected
    assert error.retryable is retryable


def test_message_names_the_subject_and_quotes_slurm() -> None:
    error = error_for(failed("slurm_load_jobs error: Invalid job id specified"), "job 99999")
    assert str(error) == "Slurm does not know job 99999 (slurm_load_jobs error: Invalid job id specified)"


def test_unreachable_controller_says_it_will_retry() -> None:
    error = error_for(failed("Unable to contact slurm controller (connect failure)"), "job 12")
    assert "unreachable" in str(error) and "retrying" in str(error)


def test_success_passes_through() -> None:
    ok = CommandResult(argv=["squeue"], returncode=0, stdout="{}")
    assert check(ok, "the job list") is ok
