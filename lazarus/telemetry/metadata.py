"""What the Temporal UI shows of a job workflow before opening it: its static summary and details.

The telemetry loop sets them when it starts the job's workflow (Temporal user metadata, fixed for the run):
the summary is the one line of the workflow list; the details, Markdown, open the workflow's page with the
job, its user, its nodes and its state at start. What happens next is the workflow's current details and
its signals' names (``attempt_started``, ``anomaly``, ...). The job's name and user come from the job
itself, so they are quoted as code: a hostile name can neither add a link nor break the layout.
"""

from __future__ import annotations

from lazarus.models.recovery import JobRecoveryInput
from lazarus.models.slurm import JobSnapshot

MAX_NODES_SHOWN = 16
MAX_TEXT = 120


def _plain(text: str) -> str:
    """``text`` safe inside a Markdown code span on one line: no backticks, no control characters, bounded."""
    cleaned = "".join(ch if ch.isprintable() and ch != "`" else "?" for ch in text)
    return cleaned[:MAX_TEXT] + ("…" if len(cleaned) > MAX_TEXT else "")


def _nodes(nodes: list[str]) -> str:
    if not nodes:
        return "none yet (pending)"
    shown = ",".join(_plain(n) for n in nodes[:MAX_NODES_SHOWN])
    more = f" and {len(nodes) - MAX_NODES_SHOWN} more" if len(nodes) > MAX_NODES_SHOWN else ""
    return f"{shown}{more} ({len(nodes)})"


def job_summary(job: JobSnapshot) -> str:
    """One line for the workflow list: the job, its name and user, and its Slurm state when Lazarus found it."""
    return f"Slurm job {job.job_id} ({_plain(job.name)}) of {_plain(job.user)}: {job.state.value} at start"


def job_details(job: JobSnapshot, inp: JobRecoveryInput) -> str:
    """Markdown for the workflow's page: job, user, nodes and state at start, and how Lazarus watches it."""
    mode = inp.job_mode or inp.cluster_mode
    lines = [
        f"**Slurm job** {job.job_id} `{_plain(job.name) or '-'}` on cluster `{_plain(inp.cluster)}`",
        f"**User** `{_plain(job.user) or '-'}`, partition `{_plain(job.partition) or '-'}`",
        f"**Nodes at start** {_nodes(job.nodes)}",
        f"**State at start** {job.state.value}, attempt {job.restarts}",
        f"**Lazarus** policy `{_plain(inp.policy_name)}`, {mode.value} mode",
    ]
    if inp.opt_in_error:
        lines.append(f"**Ignored** {_plain(inp.opt_in_error)}")
    return "\n\n".join(lines)
