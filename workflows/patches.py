"""Patch ids of the job workflow's decision path: behaviour changes running workflows would see.

A change that alters the commands a workflow issues for the same history (another activity, a signal more
or less, a timer set or cancelled elsewhere) goes behind ``workflow.patched(id)``: a run that started
before the change has no marker for it in its history and keeps the old behaviour until it ends or
continues as new; every later run takes the new one. See CONTRIBUTING.md ("Workflow histories").

The decision path is pure (``workflows.transitions.apply``), so it cannot ask Temporal itself: when the
job workflow decides, it asks ``workflow.patched`` for each id of :data:`DECISION_PATCHES` and hands the
ones the run predates in with the ``Decide`` input (``Decide.unpatched``). Never change or reuse an id;
remove a patch (keeping its new branch) only once no workflow started before it can still run, together
with the stored histories recorded before it (``tests/histories/*@<rev>.json``).
"""

from __future__ import annotations

BOUND_TO_ALLOCATION = "decision-bound-to-allocation"
"""The decision excludes and drains only nodes of the attempt's allocation. Before it, a decision took the
implicated nodes of the allocation, or every implicated node when none (or no allocation) was known."""

STOP_CANCELS = "stop-cancels-the-job"
"""Stop means stop: a stop decision for an attempt that still runs cancels the job (act mode at once, monitor
mode once approved; ``Policy.on_stop`` may keep it running). Before it, a stop only marked the workflow
stopped and the job held its allocation until it ended on its own."""

EXPEDITES = "expedites-hardware-restarts"
"""A restart for an infrastructure or hardware failure goes to the top of its partition's queue when the policy
turns ``expedite`` on (workflows/expedite.py), and the boost is lifted once the attempt runs. Before it, no
restart was expedited whatever the policy said."""

FINISHING_IS_NOT_HUNG = "finishing-is-not-hung"
"""A hang call for an attempt whose progress reached the total steps its progress lines declare is advice
``none``: training is over and the job is ending (Slurm may keep it running a while, e.g. while srun waits on
a restarted slurmctld); Lazarus leaves it to Slurm and watches for its end. Before it, such an attempt was
restarted (or stopped) like any hang."""

DECISION_PATCHES: tuple[str, ...] = (BOUND_TO_ALLOCATION, STOP_CANCELS, EXPEDITES, FINISHING_IS_NOT_HUNG)

TELEMETRY_KEEPS_THE_HANG_CLOCK = "telemetry-keeps-the-hang-clock"
"""Telemetry keeps an attempt's hang clock once its digests say so (``ProgressDigest.hang_clock``): a digest
marked ``silent`` makes the workflow check telemetry's progress view at once (as its watchdog does when it fires),
and the workflow's own hang timer becomes a backstop at ``max(budget, BACKSTOP)`` after the last progress
(workflows/timers.py), replaced when a digest moves it later. Asked once, when a run starts; the run keeps the
answer in ``JobRecoveryInput.follows_hang_clock``. Before it, the hang timer ran at the budget and telemetry sent a
digest every three quarters of it (40-45 workflow tasks per job-hour at a 2-minute budget)."""
