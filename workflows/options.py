"""Retry policies of the activities the workflows call, in one place.

Scheduler writes retry for a while (slurmctld restarts, a worker dies mid-action: the
actions are idempotent), but never on errors that would fail the same way again.
The type names are those ``activities/slurm.py`` raises (``activities.options``).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy

from activities.options import NON_RETRYABLE_SLURM_ERRORS as PERMANENT_SLURM_ERRORS

SLURM_WRITE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=20,
    non_retryable_error_types=PERMANENT_SLURM_ERRORS,
)
SLURM_READ_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=5),
    maximum_attempts=10,
    non_retryable_error_types=PERMANENT_SLURM_ERRORS,
)
