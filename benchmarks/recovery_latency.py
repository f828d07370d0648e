"""Recovery latency on the local real Slurm cluster, as distributions over repeated runs.

    .venv/bin/python benchmarks/recovery_latency.py --runs 20 --hang-runs 5

For each crash run a 2-node training job (lazarus.demo.train) prints a GPU
Xid on rank 1 at step 8 with its own wall-clock timestamp; Lazarus (act mode,
one worker with all roles, a real Temporal dev server) detects, decides and
restarts it. Measured per run:

* detection: the failing line's timestamp -> the anomaly recorded in the workflow;
* action: the decision -> requeue verified (held, excluded, released) by the restart activity;
* action incl. Slurm: the decision -> the new attempt RUNNING on other nodes (includes Slurm's own
  requeue delay, BeginTime = now + cred_expire + 1 s, and its 1 s start-time resolution);
* milestones (issue 12, docs/milestones.md): from the failing line to the requeue verified, to the new attempt
  running, to its progress restored (its first progress line: training again, not just running), and to
  completed; and the steps lost (last step seen minus the checkpoint resumed from).

Hang runs stop printing progress at step 8 while staying alive; measured is how far past the hang
budget in force (learned from the step times, bounded by the policy) the hang was recorded. Prints p50/p95/max/mean per metric and writes JSON with --json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lazarus.devstack.stack import DevStack, Parts  # noqa: E402
from lazarus.models.recovery import TERMINAL_STATES, AttemptMilestones, JobStatus, RecoveryState  # noqa: E402
from tests.conftest import TEST_DEV_SETTINGS, TEST_STATE_DIR, SlurmCluster, _sessions_lock  # noqa: E402
from tests.e2e.helpers import restore_nodes  # noqa: E402
from tests.e2e.stack import E2EStack, submit_training  # noqa: E402

LINE_TS = re.compile(r"\[(\d+\.\d+)\] \S+ kernel: NVRM: Xid")


async def wait_terminal(stack: E2EStack, job: int, timeout: float = 180) -> JobStatus:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            status = await stack.status(job)
            if status.state in TERMINAL_STATES:
                return status
        except Exception:
            pass
        await asyncio.sleep(0.5)
    raise TimeoutError(f"job {job} did not finish in {timeout} s")


def summary(name: str, values: list[float]) -> dict:
    values = sorted(values)
    if not values:
        return {"metric": name, "n": 0}
    p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return {
        "metric": name,
        "n": len(values),
        "p50": statistics.median(values),
        "p95": p95,
        "max": values[-1],
        "mean": statistics.fmean(values),
    }


async def crash_run(stack: E2EStack, workdir: Path) -> dict:
    job = submit_training(
        stack.cluster, workdir, steps=16, ckpt_every=5, fault="xid79", fault_rank=1, fault_step=8, fault_attempts="0"
    )
    status = await wait_terminal(stack, job)
    if status.state != RecoveryState.COMPLETED or len(status.attempts) < 2:
        return {"job": job, "error": f"ended {status.state.value}: {status.stop_reason}"}
    out = (workdir / f"train-{job}.out").read_text()
    line_at = datetime.fromtimestamp(float(LINE_TS.search(out).group(1)), tz=UTC)
    first, second = status.attempts[0], status.attempts[1]
    advice = status.advice_history[0]
    row = next(r for r in status.milestones if r.attempt == 1)
    if row.progress_restored_at is None or row.completed_at is None:
        return {"job": job, "error": f"milestones missing: {row.model_dump_json()}"}
    return {
        "job": job,
        "detection_s": (first.anomaly.recorded_at - line_at).total_seconds(),
        "action_verified_s": (first.requeued_at - advice.decided_at).total_seconds(),
        "action_running_s": (second.started_at - advice.decided_at).total_seconds(),
        **{f"fault_to_{name}_s": (at - line_at).total_seconds() for name, at in _milestones(row).items()},
        "running_to_training_s": (row.progress_restored_at - row.running_at).total_seconds(),
        "steps_lost": row.steps_lost,
    }


def _milestones(row: AttemptMilestones) -> dict[str, datetime]:
    reached = {
        "requeued": row.requeued_at,
        "running": row.running_at,
        "progress_restored": row.progress_restored_at,
        "completed": row.completed_at,
    }
    return {name: at for name, at in reached.items() if at is not None}


async def hang_run(stack: E2EStack, workdir: Path) -> dict:
    job = submit_training(
        stack.cluster, workdir, steps=14, ckpt_every=5, fault="hang", fault_step=8, fault_attempts="0"
    )
    status = await wait_terminal(stack, job)
    first = status.attempts[0]
    if first.anomaly is None or first.anomaly.kind.value != "hang":
        return {"job": job, "error": f"no hang recorded ({status.state.value})"}
    silent = (first.anomaly.recorded_at - first.last_progress_at).total_seconds()
    budget = first.anomaly.hang_budget_s
    return {"job": job, "silent_s": silent, "budget_s": budget, "past_budget_s": silent - budget}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hang-runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write all samples and summaries here")
    args = parser.parse_args()
    dev = DevStack(TEST_DEV_SETTINGS, Parts(temporal=False, workers=False))
    with _sessions_lock(TEST_STATE_DIR) as leases:  # a lease, as a test session holds: no one stops the cluster
        leases.mkdir(exist_ok=True)
        (leases / str(os.getpid())).touch()
    dev.up()
    cluster = SlurmCluster(
        slurm_conf=dev.layout.slurm_conf,
        env=dev.slurm_env(),
        nodes=[f"node{i}" for i in range(1, TEST_DEV_SETTINGS.nodes + 1)],
        state_dir=TEST_DEV_SETTINGS.state_dir,
    )
    root = Path(tempfile.mkdtemp(prefix="lazarus-bench-"))
    stack = E2EStack(cluster=cluster, root=root)
    stack.write_config()
    stack.start_server(first=True)
    stack.start_worker()
    crashes, hangs = [], []
    try:
        for i in range(args.runs):
            workdir = Path(tempfile.mkdtemp(prefix="run-", dir=root))
            workdir.chmod(0o755)  # noqa: ASYNC240 - one chmod per run, outside the timed part
            crashes.append(await crash_run(stack, workdir))
            restore_nodes(cluster)
            print(f"crash run {i + 1}/{args.runs}: {crashes[-1]}", flush=True)
        for i in range(args.hang_runs):
            workdir = Path(tempfile.mkdtemp(prefix="hang-", dir=root))
            workdir.chmod(0o755)
            hangs.append(await hang_run(stack, workdir))
            print(f"hang run {i + 1}/{args.hang_runs}: {hangs[-1]}", flush=True)
    finally:
        stack.stop()
        with _sessions_lock(TEST_STATE_DIR) as leases:
            (leases / str(os.getpid())).unlink(missing_ok=True)
    ok = [r for r in crashes if "error" not in r]
    table = [
        summary("crash detection (failing line -> anomaly recorded), s", [r["detection_s"] for r in ok]),
        summary("advice -> requeue verified (held, excluded, released), s", [r["action_verified_s"] for r in ok]),
        summary(
            "advice -> new attempt RUNNING elsewhere (incl. Slurm requeue delay), s",
            [r["action_running_s"] for r in ok],
        ),
        *(
            summary(f"failing line -> {name.replace('_', ' ')} (milestone), s", [r[f"fault_to_{name}_s"] for r in ok])
            for name in ("requeued", "running", "progress_restored", "completed")
        ),
        summary("running -> progress restored (start-up of the attempt), s", [r["running_to_training_s"] for r in ok]),
        summary("steps lost (last step seen - checkpoint resumed from)", [r["steps_lost"] for r in ok]),
        summary("hang recorded past the learned budget, s", [r["past_budget_s"] for r in hangs if "error" not in r]),
    ]
    print(
        f"\n{len(ok)}/{len(crashes)} crash runs recovered; {sum('error' not in h for h in hangs)}/{len(hangs)} "
        f"hangs recorded"
    )
    for row in table:
        if row["n"]:
            print(
                f"{row['metric']:75} n={row['n']:3} p50={row['p50']:6.2f} p95={row['p95']:6.2f} "
                f"max={row['max']:6.2f} mean={row['mean']:6.2f}"
            )
    if args.json:
        args.json.write_text(json.dumps({"crash_runs": crashes, "hang_runs": hangs, "summary": table}, indent=2))
    return 0 if len(ok) == len(crashes) else 1


if __name__ == "__main__":
    # SIGTERM (e.g. `timeout`) ends the run like Ctrl-C, so the Temporal server and worker are stopped
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    sys.exit(asyncio.run(main()))
