"""Activity options, declared once: every activity call in the workflows takes one of these
(through :func:`workflows.calls.run_activity`, which spreads it into ``workflow.execute_activity``).

    await run_activity("slurm_restart_excluding", request, result_type=RestartResult,
                       task_queue=queue, summary="...", preset=SLURM_RESTART)

No call site sets a timeout of its own. Scheduler writes retry for a while
(slurmctld restarts, a worker dies mid-action: the actions are idempotent),
but never on errors that would fail the same way again.

This module is imported by workflow code, so it holds constants only.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

# Permanent: retrying cannot help (bad input, unknown job/node, refused, untrusted host, missing tools).
# The names are the Slurm adapter's error classes without ``Error`` (lazarus/slurm/errors.py, as
# activities/scheduler.py raises them); a test keeps the two in step. The activities already mark these
# non-retryable; listing them here too stops retries even of an error raised by older worker code.
NON_RETRYABLE_SLURM_ERRORS = [
    "InvalidArgument",
    "UnknownJob",
    "UnknownNode",
    "UnknownReservation",
    "PermissionDenied",
    "OperationRefused",
    "MalformedOutput",
    "CommandNotFound",
    "HostKey",
    "Authentication",
]

# The Slurm adapter's limit on one command (``slurm.command_timeout_s``, default 30 s).
SLURM_COMMAND_TIMEOUT = timedelta(seconds=30)
# The most Slurm commands the restart activity runs without a heartbeat in between: it heartbeats
# after every command and every poll (lazarus/slurm/restart.py; a test counts them).
RESTART_COMMANDS_BETWEEN_HEARTBEATS = 1


def _retry(maximum_interval: timedelta, maximum_attempts: int) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=maximum_interval,
        maximum_attempts=maximum_attempts,
        non_retryable_error_types=NON_RETRYABLE_SLURM_ERRORS,
    )


# Reads are cheap and safe to repeat; a controller restart takes seconds, so back off to 5 s.
READ_RETRY = _retry(timedelta(seconds=5), 10)
# Writes re-read state before acting (idempotent), so they may retry longer.
WRITE_RETRY = _retry(timedelta(seconds=10), 20)

# The telemetry worker's view of one attempt's progress (in memory: quick, or not there at all). A telemetry
# worker that does not answer within a minute, retries and a missing worker included, leaves Lazarus blind to
# the attempt: the hang watchdog records it and checks again later (workflows/blindness.py).
TELEMETRY_READ = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(seconds=20),
    schedule_to_close_timeout=timedelta(minutes=1),
    retry_policy=READ_RETRY,
)

# The node agents' verdict, read by the telemetry worker before a drain. Bounded from scheduling on: with no
# telemetry worker polling, the ledger decides without it (the drain waits) instead of waiting for one.
NODE_HEALTH_READ = workflow.ActivityConfig(
    schedule_to_close_timeout=timedelta(seconds=60),
    start_to_close_timeout=timedelta(seconds=20),
    retry_policy=READ_RETRY,
)

# One Slurm read (node states).
SLURM_READ = workflow.ActivityConfig(start_to_close_timeout=timedelta(seconds=30), retry_policy=READ_RETRY)

# One Slurm action that verifies its result (drain, resume, release).
SLURM_WRITE = workflow.ActivityConfig(start_to_close_timeout=timedelta(seconds=60), retry_policy=WRITE_RETRY)

# The restart (requeuehold, exclude, release, verify) heartbeats while it waits for Slurm; the heartbeat
# timeout outlasts its longest stretch of commands without one, so a live worker is never timed out, and
# the whole action has time for that stretch and both of its verification waits.
SLURM_RESTART = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(minutes=10),
    heartbeat_timeout=SLURM_COMMAND_TIMEOUT * RESTART_COMMANDS_BETWEEN_HEARTBEATS + timedelta(seconds=15),
    retry_policy=WRITE_RETRY,
)

# The stop's cancel (settle, scancel, verify the job left RUNNING/PENDING) heartbeats after every command and
# poll, like the restart; it has time for its two verification waits.
SLURM_CANCEL = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(minutes=3),
    heartbeat_timeout=SLURM_COMMAND_TIMEOUT * RESTART_COMMANDS_BETWEEN_HEARTBEATS + timedelta(seconds=15),
    retry_policy=WRITE_RETRY,
)

# The cluster-wide mode (kill switch) read right before acting: quick, or unknown. Bounded from scheduling, so
# a scheduler worker that is down makes the mode unknown (then the advice waits for a person) within 30 s.
LEDGER_READ = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(seconds=10),
    schedule_to_close_timeout=timedelta(seconds=30),
    retry_policy=_retry(timedelta(seconds=2), 2),
)

# Posting a notice to the webhooks: each POST has its own timeout (at most 30 s, notifications.webhooks); a
# webhook that is down is retried for about five minutes, then the notice is given up (the workflow logs
# it). The heartbeat carries the webhooks already served across retries, so one down webhook does not make
# the others post twice. Notices never hold up a recovery: the workflows do not wait for them to act.
NOTIFY = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(minutes=2),
    schedule_to_close_timeout=timedelta(minutes=6),
    retry_policy=RetryPolicy(
        initial_interval=timedelta(seconds=2),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(minutes=1),
        maximum_attempts=8,
        non_retryable_error_types=["BadWebhook"],
    ),
)

PRESETS = {
    "TELEMETRY_READ": TELEMETRY_READ,
    "NODE_HEALTH_READ": NODE_HEALTH_READ,
    "SLURM_READ": SLURM_READ,
    "SLURM_WRITE": SLURM_WRITE,
    "SLURM_RESTART": SLURM_RESTART,
    "SLURM_CANCEL": SLURM_CANCEL,
    "LEDGER_READ": LEDGER_READ,
    "NOTIFY": NOTIFY,
}
