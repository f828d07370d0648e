"""Activity options for the Slurm activities, for callers outside Lazarus's own workflows (which use
``workflows/options.py``); the non-retryable error names here are the one list both share.

    await workflow.execute_activity("slurm_restart_excluding", request, result_type=RestartResult,
                                    task_queue=queue, **SLURM_WRITE)

This module is imported by workflow code, so it holds constants only (no
Lazarus I/O modules). The error type names mirror :mod:`lazarus.slurm.errors`
(class name without ``Error``); a test keeps the two in step. The activities
already mark permanent errors non-retryable; listing them in the policy too
means a workflow stops retrying even an error raised by older worker code.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

# Permanent: retrying cannot help (bad input, unknown job/node, refused, untrusted host, missing tools).
NON_RETRYABLE_SLURM_ERRORS = [
    "InvalidArgument",
    "UnknownJob",
    "UnknownNode",
    "PermissionDenied",
    "OperationRefused",
    "MalformedOutput",
    "CommandNotFound",
    "HostKey",
    "Authentication",
]


def _retry(maximum_interval: timedelta, maximum_attempts: int) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=maximum_interval,
        maximum_attempts=maximum_attempts,
        non_retryable_error_types=NON_RETRYABLE_SLURM_ERRORS,
    )


# Reads are cheap and safe to repeat; a controller restart takes seconds, so back off to 5 s.
SLURM_READ = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(seconds=60),
    retry_policy=_retry(timedelta(seconds=5), 10),
)

# Actions wait for Slurm to converge (a requeued job passes COMPLETING, ~KillWait) and heartbeat
# while they wait, so a dead worker is noticed in 20 s; each retry re-reads state first (idempotent).
SLURM_WRITE = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(minutes=3),
    heartbeat_timeout=timedelta(seconds=20),
    retry_policy=_retry(timedelta(seconds=10), 20),
)
