"""Parser for ``squeue --json`` (Slurm 22.05, openapi v0.0.38), the one whole-cluster read per cycle.

22.05 quirks handled here: ``-j``/``-t`` are ignored with ``--json`` (every job
slurmctld holds comes back, so callers filter), ``exit_code`` is a raw wait
status (768 = exit 3, 9 = SIGKILL), and ``standard_output`` is the unexpanded
pattern (``%j``), so it is not used: :func:`lazarus.slurm.parse.parse_scontrol_jobs`
has the real path. Later versions' ``{"set", "number"}`` wrappers are accepted too.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from lazarus.errors import shorten
from lazarus.models.slurm import JobSnapshot, JobState
from lazarus.slurm.errors import ControllerUnreachableError, MalformedOutputError
from lazarus.slurm.parse import expand_nodes, holdable


def decode_wait_status(raw: int) -> tuple[int, int | None]:
    """Split a raw wait status (``squeue --json`` ``exit_code``) into (exit code, signal or None)."""
    signal = raw & 0x7F
    return (raw >> 8) & 0xFF, (signal or None)


def _epoch(value: Any) -> datetime | None:
    """squeue --json times: an int (22.05) or {"set": bool, "number": int} (23.02+); 0 means unset."""
    if isinstance(value, dict):
        value = value.get("number") if value.get("set", True) else None
    if value in (None, 0) or not isinstance(value, int):
        return None
    return datetime.fromtimestamp(value, tz=UTC)


def _number(value: Any, default: int = 0) -> int:
    if isinstance(value, dict):
        value = value.get("number", default) if value.get("set", True) else default
    return value if isinstance(value, int) else default


def parse_squeue_json(text: str) -> list[JobSnapshot]:
    """All jobs in ``squeue --json`` output (22.05 ignores -j/-t; callers filter)."""
    try:
        document = json.loads(text)
        jobs = document["jobs"]
        if not isinstance(jobs, list):
            raise TypeError("'jobs' is not a list")
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedOutputError(f"squeue --json output is not a job list ({exc}): {shorten(text)}") from None
    errors = document.get("errors") or []
    if errors:
        # With slurmctld down, 22.05's squeue --json exits 0 with "jobs": [] and the failure only in
        # "errors": taking that list at face value would make every job look gone.
        raise ControllerUnreachableError(f"squeue --json could not load the job list: {shorten(json.dumps(errors))}")
    return [_checked_job(job) for job in jobs]


def _checked_job(job: Any) -> JobSnapshot:
    """One job, or :class:`MalformedOutputError` when a field has a type or range no Slurm prints
    (a node list that is a number, a time past year 9999, a negative count)."""
    try:
        return _job_from_json(job)
    except (TypeError, ValueError, AttributeError, OverflowError, OSError) as exc:
        raise MalformedOutputError(
            f"squeue --json job has a field of the wrong type or range ({type(exc).__name__}): {shorten(json.dumps(job))}"
        ) from None


def _job_from_json(job: Any) -> JobSnapshot:
    if not isinstance(job, dict) or not isinstance(job.get("job_id"), int):
        raise MalformedOutputError(f"squeue --json job without a numeric job_id: {shorten(json.dumps(job))}")
    raw_state = job.get("job_state")
    state = JobState.parse(raw_state[0] if isinstance(raw_state, list) and raw_state else raw_state)
    exit_code, exit_signal = _json_exit(job.get("exit_code"))
    reason = str(job.get("state_reason") or "")
    return JobSnapshot(
        job_id=job["job_id"],
        name=str(job.get("name") or ""),
        user=str(job.get("user_name") or ""),
        user_id=job["user_id"] if isinstance(job.get("user_id"), int) and job["user_id"] >= 0 else None,
        partition=str(job.get("partition") or ""),
        state=state,
        state_reason="" if reason == "None" else reason,
        restarts=_number(job.get("restart_cnt")),
        nodes=expand_nodes(job.get("nodes")),
        excluded_nodes=expand_nodes(job.get("excluded_nodes")),
        batch_host=job.get("batch_host") or None,
        exit_code=exit_code if state.finished else None,
        exit_signal=exit_signal if state.finished else None,
        comment=str(job.get("comment") or ""),
        stdout_path=None,  # squeue prints the unexpanded pattern (train-%j.out); scontrol has the real path
        stderr_path=None,
        work_dir=job.get("current_working_directory") or None,
        start_time=_epoch(job.get("start_time")),
        end_time=_epoch(job.get("end_time")),
        submit_time=_epoch(job.get("submit_time")),
        held=holdable(state) and _number(job.get("priority"), default=1) == 0,
        tasks_per_node=_tasks_per_node(job),
        priority=job["priority"] if isinstance(job.get("priority"), int) and job["priority"] >= 0 else None,
    )


def _tasks_per_node(job: dict[str, Any]) -> int | None:
    """Ranks per node for block distribution; None when Slurm does not say or tasks do not divide evenly
    (then a rank prefix names no node rather than the wrong one)."""
    explicit = _number(job.get("tasks_per_node"))
    if explicit > 0:
        return explicit
    tasks, nodes = _number(job.get("tasks")), _number(job.get("node_count"))
    if tasks > 0 and nodes > 0 and tasks % nodes == 0:
        return tasks // nodes
    return None


def _json_exit(value: Any) -> tuple[int | None, int | None]:
    """22.05: a raw wait status int. 23.02+: {"return_code": {"number": n}, "signal": {"id": {"number": s}}}."""
    if isinstance(value, int):
        return decode_wait_status(value)
    if isinstance(value, dict):
        code = _number(value.get("return_code"))
        signal = value.get("signal", {}).get("id") if isinstance(value.get("signal"), dict) else None
        return code, (_number(signal) or None)
    return None, None
