"""The chaos soak behind ``benchmarks/chaos.py``: load, faults, observations and the invariants checked at the end.

Modules: ``models`` (what is recorded), ``stack`` (the dedicated embedded stack and its worker processes),
``jobs`` (the job mix and its scripts), ``operator`` (approvals, rejections, node resumes), ``faults`` (the fault
injector), ``observer`` (what Slurm shows during the run), ``collect`` (what Temporal and Slurm say at the end),
``invariants`` (pure checks over the collected data) and ``report`` (the table and the verdict).
"""
