"""``lazarus goodput``: ETTR and GPU-hours lost per week, with Lazarus, with Slurm alone and with a person on call.

A calculator over :mod:`lazarus.goodput` (no Temporal, no Slurm). Every input has a documented default
(docs/goodput.md: the published failure count, the latencies measured in docs/benchmarks.md, the stated
assumptions) and an option to override it. Durations take a unit (``90s``, ``30m``, ``1.5h``; a bare number is
seconds). ``--milestones FILE`` measures the queue wait and the restart cost from recovered attempts' milestones
(what ``lazarus show --json`` prints; :mod:`lazarus.measured_costs`). ``--json`` prints one document: the inputs
in force, what was measured, and one estimate per case and job size.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lazarus.cli import exits
from lazarus.cli.common import json_option, print_json
from lazarus.goodput import Estimate, FailureRate, Fault, Inputs, JobCosts, Latencies, estimate
from lazarus.measured_costs import MeasuredCosts, MilestonesUnreadable, measure, rows_of

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands

_UNITS = {"": 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*")

# command-line option → JobCosts field
JOB_OPTIONS = {
    "--checkpoint-interval": "checkpoint_interval",
    "--restart-cost": "restart_cost",
    "--queue-wait": "queue_wait",
}


def duration_arg(text: str) -> float:
    """argparse type: a duration in seconds, from ``45``, ``0.53s``, ``2m``, ``30min``, ``1.5h`` or ``1d``."""
    match = _DURATION.fullmatch(text.lower())
    if not match or match.group(2) not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (a number with s, m, h or d; e.g. 90s, 30m)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def interval_arg(text: str) -> float:
    """argparse type: a duration above 0 (a checkpoint interval)."""
    value = duration_arg(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a checkpoint interval is longer than 0 s")
    return value


def positive_arg(text: str) -> float:
    """argparse type: a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number above 0")
    return value


def count_arg(text: str) -> int:
    """argparse type: a whole number of 1 or more (a GPU count)."""
    sizes = gpus_arg(text)
    if len(sizes) != 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give one GPU count")
    return sizes[0]


def gpus_arg(text: str) -> tuple[int, ...]:
    """argparse type: job sizes in GPUs, comma-separated (``1024,16384``)."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of GPU counts (e.g. 1024,16384)") from None
    if any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: a job has 1 GPU or more")
    return sizes


def mix_arg(text: str) -> dict[Fault, float]:
    """argparse type: fault weights (counts or shares), ``crash=56,bad-node=268,node-down=46,hang=49``;
    a fault not named weighs 0."""
    mix: dict[Fault, float] = {}
    for part in text.split(","):
        name, _, weight = part.partition("=")
        try:
            fault = Fault(name.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{name.strip()!r} is not a fault; the mix names {', '.join(f.value for f in Fault)}"
            ) from None
        try:
            value = float(weight)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{part!r}: give each fault a weight, e.g. {fault.value}=56") from None
        if not math.isfinite(value) or value < 0:
            raise argparse.ArgumentTypeError(f"{part!r}: a weight is a number of 0 or more")
        mix[fault] = value
    if sum(mix.values()) <= 0:
        raise argparse.ArgumentTypeError("the mix needs at least one fault with a weight above 0")
    return mix


def _seconds(value: float) -> str:
    """The default of a duration option, as --help shows it."""
    return f"{value / 60:g} min" if value >= 120 and value % 60 == 0 else f"{value:g} s"


def register(sub: Subcommands) -> None:
    defaults = Inputs()
    p = sub.add_parser(
        "goodput",
        help="estimate ETTR and GPU-hours lost per week: Lazarus, Slurm alone, a person on call",
        description="Estimate the effective training time ratio (ETTR) and the GPU-hours lost per week of a "
        "large training job, with Lazarus, with Slurm alone and with a person on call. The formula, its "
        "derivation and the source of every default are in docs/goodput.md.",
    )
    p.add_argument(
        "--gpus",
        type=gpus_arg,
        metavar="N[,N...]",
        help=f"job sizes, comma-separated (default: {','.join(map(str, defaults.gpus))})",
    )
    _rate_options(p, defaults)
    _cost_options(p, defaults)
    p.add_argument(
        "--milestones",
        action="append",
        metavar="FILE",
        help="measure the queue wait and the restart cost from recovered attempts: what `lazarus show JOBID "
        "--json` prints (one document, JSON lines or a JSON list; `-` reads stdin; repeatable); "
        "--queue-wait and --restart-cost still win",
    )
    json_option(p, "the inputs in force and every estimate")
    exits.declare(p, {exits.REFUSED: "refused: an input out of range or not understood (one line on stderr)"})
    p.set_defaults(func=run)


def _rate_options(p: argparse.ArgumentParser, defaults: Inputs) -> None:
    """The published failure count and its fault mix."""
    r = defaults.rate
    rate = p.add_argument_group(
        f"failure rate (default: Llama 3, {r.interruptions:g} unexpected interruptions in {r.days:g} days on "
        f"{r.gpus:,} GPUs)"
    )
    rate.add_argument(
        "--interruptions",
        type=positive_arg,
        metavar="COUNT",
        help=f"failures observed (default: {defaults.rate.interruptions:g})",
    )
    rate.add_argument(
        "--days", type=positive_arg, metavar="DAYS", help=f"over this many days (default: {defaults.rate.days:g})"
    )
    rate.add_argument(
        "--observed-gpus",
        type=count_arg,
        metavar="N",
        help=f"on a job of this many GPUs (default: {defaults.rate.gpus})",
    )
    rate.add_argument(
        "--mix",
        type=mix_arg,
        metavar="FAULT=WEIGHT,...",
        help=f"fault weights (counts or shares); the default, Llama 3's causes: "
        f"{','.join(f'{fault.value}={weight:g}' for fault, weight in defaults.mix.items())}; a fault not named weighs 0",
    )


def _cost_options(p: argparse.ArgumentParser, defaults: Inputs) -> None:
    """The job's own costs per failure and the latencies of each mechanism."""
    job = p.add_argument_group("the job's own costs per failure (the same in every case)")
    for option, field in JOB_OPTIONS.items():
        info = JobCosts.model_fields[field]
        job.add_argument(
            option,
            type=interval_arg if field == "checkpoint_interval" else duration_arg,
            metavar="DURATION",
            help=f"{info.description} (default: {_seconds(info.default)})",
        )
    latency = p.add_argument_group("latencies (defaults: docs/benchmarks.md and docs/goodput.md)")
    for field, info in Latencies.model_fields.items():
        latency.add_argument(
            f"--{field.replace('_', '-')}",
            type=duration_arg,
            metavar="DURATION",
            help=f"{info.description} (default: {_seconds(getattr(defaults.latencies, field))})",
        )


def measured_from(args: argparse.Namespace, requeue_delay: float) -> MeasuredCosts | None:
    """What the milestone files given with --milestones measured (None without the option)."""
    if not args.milestones:
        return None
    rows = []
    for name in args.milestones:
        try:
            text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise MilestonesUnreadable(f"{name}: cannot read it ({exc.strerror})") from None
        rows.extend(rows_of(text, "stdin" if name == "-" else name))
    return measure(rows, requeue_delay, ", ".join(args.milestones))


def inputs_from(args: argparse.Namespace, measured: MeasuredCosts | None = None) -> Inputs:
    """The model's inputs: the defaults, then what the milestones measured, then what the options override."""
    base = Inputs()
    rate = base.rate.model_dump()
    for option, field in (("interruptions", "interruptions"), ("days", "days"), ("observed_gpus", "gpus")):
        if getattr(args, option) is not None:
            rate[field] = getattr(args, option)
    job = {field: getattr(args, option[2:].replace("-", "_")) for option, field in JOB_OPTIONS.items()}
    if measured is not None:
        for field in ("queue_wait", "restart_cost"):
            sample = getattr(measured, field)
            if job[field] is None and sample is not None:
                job[field] = sample.median
    latencies = {field: getattr(args, field) for field in Latencies.model_fields}
    return Inputs(
        rate=FailureRate(**rate),
        mix=args.mix or base.mix,
        job=JobCosts(**{k: v for k, v in job.items() if v is not None}),
        latencies=Latencies(**{k: v for k, v in latencies.items() if v is not None}),
        gpus=args.gpus or base.gpus,
    )


def document(inputs: Inputs, rows: list[Estimate], measured: MeasuredCosts | None = None) -> dict[str, Any]:
    """--json: the inputs in force (with the derived rate and shares), what the milestones measured (null
    without --milestones) and every estimate."""
    return {
        "inputs": inputs.model_dump(mode="json"),
        "measured": measured.model_dump(mode="json") if measured is not None else None,
        "failures_per_gpu_hour": inputs.rate.per_gpu_hour,
        "fault_shares": {fault.value: share for fault, share in inputs.shares().items()},
        "estimates": [row.model_dump(mode="json") for row in rows],
    }


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def measured_line(measured: MeasuredCosts) -> str:
    """Where the queue wait and restart cost came from, when the milestones measured them."""
    parts = []
    for label, sample in (("queue wait", measured.queue_wait), ("restart cost", measured.restart_cost)):
        if sample is None:
            parts.append(f"{label} not measured (no attempt with both milestones)")
        else:
            parts.append(f"{label} median {_duration(sample.median)} (worst {_duration(sample.worst)}, n={sample.n})")
    return f"measured from {measured.recoveries} recovered attempt(s): " + "; ".join(parts)


def render(inputs: Inputs, rows: list[Estimate], measured: MeasuredCosts | None = None) -> str:
    """The table, preceded by the inputs it was computed from."""
    rate, job = inputs.rate, inputs.job
    mix = ", ".join(f"{fault.value} {share:.0%}" for fault, share in inputs.shares().items())
    lines = [
        f"failures: {rate.interruptions:g} in {rate.days:g} days on {rate.gpus:,} GPUs = "
        f"{rate.per_gpu_hour:.3g} per GPU-hour; mix: {mix}",
        f"per failure: {_duration(job.lost_work)} recomputed (checkpoint every {_duration(job.checkpoint_interval)}), "
        f"restart cost {_duration(job.restart_cost)}, queue wait {_duration(job.queue_wait)}",
        *([measured_line(measured)] if measured is not None else []),
        "",
        f"{'GPUS':>7}  {'CASE':12} {'MTBF':>8} {'FAILURES/WK':>11} {'TO RUNNING':>10} {'DOWN/FAILURE':>12} "
        f"{'ETTR':>6} {'GPU-H LOST/WK':>13}",
    ]
    for row in rows:
        lines.append(
            f"{row.gpus:>7,}  {row.case.value:12} {_duration(row.mtbf_hours * 3600):>8} "
            f"{row.failures_per_week:>11.1f} {_duration(row.to_running_s):>10} "
            f"{_duration(row.downtime_per_failure_s):>12} {row.ettr:>6.3f} {row.gpu_hours_lost_per_week:>13,.0f}"
        )
    lines.append("first-order model: ETTR = 1 / (1 + λ·D); docs/goodput.md derives it and cites every default")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    requeue_delay = args.requeue if args.requeue is not None else Latencies().requeue
    measured = measured_from(args, requeue_delay)
    inputs = inputs_from(args, measured)
    rows = estimate(inputs)
    if args.json:
        print_json(document(inputs, rows, measured))
    else:
        print(render(inputs, rows, measured))
    return 0
