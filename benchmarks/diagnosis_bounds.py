"""What bounds the excerpt scores, and what the service does with the same excerpts.

``diagnosis_accuracy.py`` scores the log reader alone (``lazarus diagnose``). This script reads the same
outcomes three more ways:

1. **Where the misses are.** A failure answered "no failure" (the reader knows no line of it) is a coverage miss;
   a failure found with a wrong field is an answer miss.
2. **The per-signature ceiling.** An engine that answers by the signature it matched gives every excerpt of
   that signature the same answer. The best such table, fitted on the scored set itself (each matched
   signature's majority label), bounds what per-signature work can reach on that set's matched excerpts; with
   every excerpt answered "no failure" given the best single answer too, it bounds the whole set. The table
   fitted on the tuning pool and applied to another set is what a learned per-signature answer reaches there.
3. **What the service does** (``--service``). In service a failed attempt is also seen by Slurm and a stalled
   one by the hang watchdog. An attempt that ends FAILED with no known line gets the scheduler's fallback
   diagnosis (``workflows/decision.py`` ``scheduler_diagnosis``: crash, unknown, retry on the same nodes), and
   a job that stops making progress gets the watchdog's (``hang_diagnosis``: hang, unknown, retry on the same
   nodes); an unknown failure that repeats stops. So the service answer is the reader's answer, except that a
   crash or hang excerpt the reader answers "no failure" gets those fallbacks. The excerpt's label says how the
   job ended, which is what Slurm and the watchdog would see; nothing else of the label is used. Benign and
   straggler excerpts keep the reader's answer (a straggler is judged by live throughput, which an excerpt
   does not hold). This is not issue 9's measure, which is the reader's; it is what an operator gets.

Each wrong retry advice is also sorted by what it costs in service, against a cluster without Lazarus:
**harm** is worse than no Lazarus (a healthy job restarted or stopped, a good node excluded); **left to a
person** is no better (a job that a restart would have resumed is stopped and waits for someone, as it would
have without Lazarus); **bounded** costs one more attempt, after which the unknown-repeat rule, the
checkpoint-progress limit or the attempt cap ends the retries.

    .venv/bin/python benchmarks/diagnosis_bounds.py [--split dev|test|all|heldout|scored] [--service] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "benchmarks")]

from diagnosis_accuracy import FIELDS, Outcome, real_examples, run, score  # noqa: E402

NO_SIGNATURE = "(no signature)"

FALLBACKS: dict[str, dict[str, Any]] = {
    "crash": {"failure_kind": "crash", "category": "unknown", "retry_advice": "retry_same_nodes"},
    "hang": {"failure_kind": "hang", "category": "unknown", "retry_advice": "retry_same_nodes"},
}
"""What Slurm's end state (FAILED) and the hang watchdog answer when the log holds no known line."""

COSTS: dict[tuple[str | None, str | None], tuple[str, str]] = {
    (None, "retry_same_nodes"): ("harm", "a healthy job restarted"),
    (None, "retry_excluding_nodes"): ("harm", "a healthy job restarted"),
    (None, "stop"): ("harm", "a healthy job stopped"),
    ("retry_same_nodes", "stop"): ("left", "a job that would have resumed left to a person"),
    ("retry_excluding_nodes", "stop"): ("left", "a job that would have resumed left to a person"),
    ("retry_same_nodes", "retry_excluding_nodes"): ("harm", "a good node excluded"),
    ("stop", "retry_same_nodes"): ("bounded", "one more attempt before the job stops"),
    ("stop", "retry_excluding_nodes"): ("bounded", "one more attempt before the job stops"),
    ("retry_excluding_nodes", "retry_same_nodes"): ("bounded", "one more attempt on the suspect node"),
}
"""(the label's advice, the answer's advice) -> the cost of that wrong advice in service."""


def service_answer(outcome: Outcome) -> dict[str, Any]:
    """The answer the service acts on: the reader's, or the scheduler's and watchdog's fallback."""
    kind = outcome.example.expect["failure_kind"]
    if outcome.got["failure_kind"] == "none" and kind in FALLBACKS:
        return dict(FALLBACKS[kind])
    return dict(outcome.got)


def as_service(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes with the service's answers in place of the reader's."""
    return [replace(o, got=service_answer(o)) for o in outcomes]


def where_missed(outcomes: list[Outcome]) -> dict[str, int]:
    """Failures answered "no failure" (coverage) against failures found with a wrong field (answer)."""
    failures = [o for o in outcomes if o.example.expect["failure_kind"] != "none"]
    unseen = [o for o in failures if o.got["failure_kind"] == "none"]
    found = [o for o in failures if o.got["failure_kind"] != "none"]
    wrong = [o for o in found if any(o.got[f] != o.example.expect[f] for f in FIELDS)]
    return {"failures": len(failures), "answered_none": len(unseen), "found": len(found), "found_wrong": len(wrong)}


def _group(outcome: Outcome) -> str:
    return outcome.signature or NO_SIGNATURE


def _label(outcome: Outcome, field: str) -> str:
    return str(outcome.example.expect[field])


def majority_table(outcomes: list[Outcome]) -> dict[str, dict[str, str]]:
    """Each matched signature's majority label, per field (ties go to the label seen first)."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if o.signature:
            groups[o.signature].append(o)
    return {
        sig: {f: Counter(_label(o, f) for o in members).most_common(1)[0][0] for f in FIELDS}
        for sig, members in groups.items()
    }


def ceiling(outcomes: list[Outcome]) -> dict[str, Any]:
    """The per-signature ceiling on ``outcomes``, fitted on themselves.

    ``matched``: over excerpts with a signature, the majority-label table against the engine's own answers.
    ``whole_set``: every excerpt, the unmatched ones given their own single best answer as one more group.
    ``joint``: the same over the three fields together (one answer per signature for all three)."""
    matched = [o for o in outcomes if o.signature]
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[_group(o)].append(o)

    def best(members: list[Outcome], field: str) -> int:
        return Counter(_label(o, field) for o in members).most_common(1)[0][1]

    def share(right: int, n: int) -> float:
        return round(right / n, 3) if n else 0.0

    n_matched = len(matched)
    joint = sum(
        Counter(tuple(_label(o, f) for f in FIELDS) for o in members).most_common(1)[0][1]
        for members in groups.values()
    )
    return {
        "signatures": len(groups) - (NO_SIGNATURE in groups),
        "matched": n_matched,
        "matched_engine": {f: share(sum(str(o.got[f]) == _label(o, f) for o in matched), n_matched) for f in FIELDS},
        "matched_ceiling": {
            f: share(sum(best(m, f) for s, m in groups.items() if s != NO_SIGNATURE), n_matched) for f in FIELDS
        },
        "whole_set_ceiling": {f: share(sum(best(m, f) for m in groups.values()), len(outcomes)) for f in FIELDS},
        "joint_ceiling": share(joint, len(outcomes)),
    }


def apply_table(outcomes: list[Outcome], table: dict[str, dict[str, str]]) -> list[Outcome]:
    """The outcomes answered by a per-signature table (signatures the table lacks keep the engine's answer)."""
    return [
        replace(o, got={f: None if (v := table[o.signature][f]) == "None" else v for f in FIELDS})
        if o.signature in table
        else o
        for o in outcomes
    ]


def effective_advice(outcome: Outcome) -> str | None:
    """The advice as the service carries it out: excluding nodes with no node named restarts on the same nodes
    (``decide_advice`` excludes only nodes the diagnosis names, within the job's allocation)."""
    advice = outcome.got["retry_advice"]
    return "retry_same_nodes" if advice == "retry_excluding_nodes" and not outcome.nodes else advice


def costs(outcomes: list[Outcome]) -> dict[str, Any]:
    """Each wrong retry advice sorted by its cost in service, and the totals of harm, left to a person, bounded.

    A wrong advice to exclude nodes that names none costs what its restart on the same nodes costs (nothing,
    when that was the right advice)."""
    counted: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        want, got, carried_out = o.example.expect["retry_advice"], o.got["retry_advice"], effective_advice(o)
        if want != got and got is not None and want != carried_out:
            counted[COSTS[(want, carried_out)]] += 1
    return {
        "harm": sum(n for (kind, _), n in counted.items() if kind == "harm"),
        "left_to_a_person": sum(n for (kind, _), n in counted.items() if kind == "left"),
        "bounded": sum(n for (kind, _), n in counted.items() if kind == "bounded"),
        "no_action": sum(
            o.got["retry_advice"] is None and o.example.expect["retry_advice"] is not None for o in outcomes
        ),
        "by_cost": {what: n for (_, what), n in sorted(counted.items())},
    }


def report(outcomes: list[Outcome], pool_table: dict[str, dict[str, str]] | None) -> dict[str, Any]:
    """Every measure of this script over one set's reader outcomes."""
    service = as_service(outcomes)
    service_score = score(service)
    result: dict[str, Any] = {
        "examples": len(outcomes),
        "reader": score(outcomes)["accuracy"],
        "where_missed": where_missed(outcomes),
        "ceiling": ceiling(outcomes),
        "reader_costs": costs(outcomes),
        "service": service_score["accuracy"],
        "service_benign_recoveries": service_score["benign_recoveries"],
        "service_costs": costs(service),
    }
    if pool_table is not None:
        result["pool_table"] = score(apply_table(outcomes, pool_table))["accuracy"]
    return result


def render(name: str, r: dict[str, Any]) -> str:
    def row(acc: dict[str, float]) -> str:
        return "  ".join(f"{f} {acc[f]:.3f}" for f in FIELDS)

    m, c = r["where_missed"], r["ceiling"]
    lines = [
        f"== {name}: {r['examples']} excerpts",
        f"  reader (issue 9's measure)        {row(r['reader'])}",
        f"  failures {m['failures']}: answered none {m['answered_none']}, found {m['found']} "
        f"(a field wrong in {m['found_wrong']})",
        f"  matched {c['matched']} excerpts, {c['signatures']} signatures:",
        f"    engine                          {row(c['matched_engine'])}",
        f"    per-signature ceiling (in set)  {row(c['matched_ceiling'])}",
        f"  whole-set per-signature ceiling   {row(c['whole_set_ceiling'])}  joint {c['joint_ceiling']:.3f}",
    ]
    if "pool_table" in r:
        lines.append(f"  pool's per-signature table        {row(r['pool_table'])}")
    for label, key in (("reader", "reader_costs"), ("service", "service_costs")):
        k = r[key]
        lines.append(
            f"  {label} wrong advice: harm {k['harm']}, left to a person {k['left_to_a_person']}, "
            f"bounded {k['bounded']}, no action {k['no_action']}"
        )
        lines += [f"    {what}: {n}" for what, n in k["by_cost"].items()]
    lines.append(
        f"  service (reader + Slurm + hang watchdog) {row(r['service'])}  "
        f"benign recoveries {r['service_benign_recoveries']}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="the per-signature ceiling and the service's answers")
    parser.add_argument("--split", choices=["dev", "test", "all", "heldout", "scored"], default="all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.split == "all":
        outcomes, table = run(real_examples("dev") + real_examples("test")), None
    elif args.split in ("dev", "test"):
        outcomes, table = run(real_examples(args.split)), None
    else:  # a frozen set: the pool's per-signature table is applied to it too
        outcomes = run(real_examples(args.split))
        table = majority_table(run(real_examples("dev") + real_examples("test")))
    result = report(outcomes, table)
    print(json.dumps(result, indent=2) if args.json else render(args.split, result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
