"""Chaos soak: real jobs, real faults, and the trust invariants checked over every job at the end.

    .venv/bin/python benchmarks/chaos.py --duration 1800 --seed 1 --json /tmp/chaos.json

Runs against its own embedded stack (cluster ``lzchaos`` under /var/tmp/lazarus-chaos, ports 61001-62233,
started if needed, stopped at the end unless ``--keep-stack``): Slurm with 4 nodes, a node agent per node on a
fake NVML, a Temporal dev server (SQLite) and three Lazarus workers (control, scheduler, telemetry) in act mode.

- Load: a few 2-node jobs at a time running the demo trainer, each healthy, noisy, crashing (Xid 79, ECC, NCCL
  timeout, application error; an Xid or ECC error reaches the node's fake GPU, so its agent corroborates a
  drain), hanging or hostile (an Xid for a node outside its allocation, a huge hostlist,
  terminal escapes, shell metacharacters), half of them in monitor mode; the soak approves some advice and
  rejects some through the `lazarus advice` CLI, Temporal updates and signals, and lets the rest expire.
- Faults (seeded): kill -9 of the workers, kill -9 of the Temporal server (restarted on the same database),
  SIGSTOP/SIGCONT of slurmctld, Temporal or a worker, slurmctld stopped and started. Killing the SSH server is
  skipped (the embedded stack runs Slurm commands locally) and the output says so.
- Invariants (benchmarks/soak/invariants.py), printed as a table: no anomaly without a terminal decision; no
  attempt requeued twice; no job held past its decision deadline; no healthy job restarted or stopped; no node
  drained without corroboration; no node outside a job's allocation touched; no approval lost.

Exit status: 0 when every invariant holds, 1 when one fails, 2 when the soak itself could not run. The last line
is the verdict, e.g. ``VERDICT: PASS (8/8 invariants, 142 jobs, 23 faults)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from loguru import logger  # noqa: E402
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter  # noqa: E402

from benchmarks.soak.invariants import check_all  # noqa: E402
from benchmarks.soak.models import SoakResult  # noqa: E402
from benchmarks.soak.report import fault_summary, print_violations, table, verdict, write_json  # noqa: E402
from benchmarks.soak.run import Soak, SoakOptions  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=1800.0, help="seconds of load and faults (default 1800)")
    p.add_argument("--seed", type=int, default=1, help="seed of the job mix, the faults and the operator")
    p.add_argument("--concurrency", type=int, default=4, help="soak jobs pending or running at a time")
    p.add_argument("--json", type=Path, help="write the whole result here")
    p.add_argument("--keep-stack", action="store_true", help="leave the embedded stack running at the end")
    p.add_argument(
        "--recheck",
        type=Path,
        metavar="FILE",
        help="run nothing: judge the facts a run saved with --json again, with the invariants as they are now",
    )
    return p.parse_args(argv)


def recheck(path: Path) -> SoakResult:
    """A saved run's result, its invariants judged again from the facts it saved (``data``)."""
    saved = json.loads(path.read_text())
    for derived in ("passed", "verdict"):  # written beside the result, derived from it
        saved.pop(derived, None)
    result = SoakResult.model_validate(saved)
    if result.data is None:
        raise ValueError(f"{path} holds no facts (written by a run without --json?)")
    return result.model_copy(update={"invariants": check_all(result.data)})


def say(text: str) -> None:
    print(text, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logger.remove()  # the devstack's debug lines ("started ... as pid") would drown the soak's own
    logger.add(sys.stderr, level="WARNING")
    # the Temporal client's own retry warnings while the soak has the server down are expected: errors only
    Runtime.set_default(
        Runtime(
            telemetry=TelemetryConfig(
                logging=LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
            )
        ),
        error_if_already_set=False,
    )
    opts = SoakOptions(
        duration_s=args.duration, seed=args.seed, concurrency=args.concurrency, keep_stack=args.keep_stack
    )
    try:
        result = recheck(args.recheck) if args.recheck else asyncio.run(Soak(opts, say=say).run())
    except KeyboardInterrupt:
        say("VERDICT: ERROR (interrupted)")
        return 2
    except Exception as exc:
        traceback.print_exc()
        say(f"VERDICT: ERROR (the soak could not run: {type(exc).__name__}: {exc})")
        return 2
    say("")
    say(f"seed {result.seed}, {result.duration_s:.0f} s of load on {result.machine}, {result.started_at:%Y-%m-%d}")
    say(f"jobs: {result.jobs} ({', '.join(f'{k} {n}' for k, n in result.jobs_by_kind.items())})")
    say(fault_summary(result))
    for note in result.notes:
        say(f"note: {note}")
    say("")
    say(table(result))
    details = print_violations(result)
    if details:
        say("")
        say(details)
    if args.json and not args.recheck:
        write_json(result, args.json)
        say(f"results written to {args.json}")
    say(verdict(result))
    return 0 if result.passed else 1


if __name__ == "__main__":
    # SIGTERM (e.g. `timeout`) ends the soak like Ctrl-C, so the stack is stopped
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    sys.exit(main())
