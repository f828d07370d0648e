"""Whose answer an advice takes: an approval or rejection must be for this job of this cluster, and is
recorded as decided by its caller.

The CLI names the job and cluster it means in every answer; a workflow refuses an answer meant for another
one (an operator who pasted the wrong workflow id, a UI signal sent to the wrong job), whatever its
generation. Refused answers that came as signals are kept on the job's record (see
:func:`workflows.transitions._answer_refused`), since a signal cannot be refused to its sender. Pure functions of the state, like :mod:`workflows.transitions`.
"""

from __future__ import annotations

from lazarus.errors import shorten
from lazarus.models.callers import Caller
from lazarus.models.recovery import Approval, JobRecoveryInput, Rejection
from workflows.authorization import decided_by


def misaddressed(state: JobRecoveryInput, answer: Approval | Rejection) -> str | None:
    """Why ``answer`` is not for this job's advice; None when it names no other job or cluster."""
    here = f"this is job {state.job_id} of cluster {state.cluster!r}"
    if answer.cluster is not None and answer.cluster != state.cluster:
        return f"the answer is for a job of cluster {shorten(repr(answer.cluster), 80)}; {here}"
    if answer.job_id is not None and answer.job_id != state.job_id:
        return f"the answer is for job {answer.job_id}; {here}"
    return None


def signed(answer: Approval | Rejection, caller: Caller | None) -> Approval | Rejection:
    """The accepted ``answer`` as the job's record keeps it: decided by the caller's identity (the message's
    free-text ``operator`` kept only as a note), or by that note when the message carried no identity."""
    return answer.model_copy(update={"operator": decided_by(caller, answer.operator)})
