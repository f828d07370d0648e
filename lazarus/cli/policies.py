"""`lazarus policies [--json]`: the recovery policies this configuration defines, and which a job may choose.

Read from the configuration (no Temporal, no Slurm): what a job gets when its comment names a policy, and
which of the policy's fields the comment may tighten (``JOB_OVERRIDABLE``). ``--json`` prints one object
per policy, one per line, like every listing.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lazarus.cli.common import json_option, print_json_lines, settings_from
from lazarus.models.policy import JOB_OVERRIDABLE, Policy
from lazarus.telemetry.optin import selectable

if TYPE_CHECKING:
    from lazarus.cli.parser import Subcommands


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "policies",
        help="the recovery policies of this configuration, and which a job may choose",
        description="List the configured recovery policies: which a job may name in its comment, its mode "
        "override, hang budgets and attempt limits.",
    )
    json_option(p, "policy", listing=True)
    p.set_defaults(func=run)


def row(name: str, policy: Policy) -> dict[str, Any]:
    """One policy for --json: its name, whether jobs may choose it, what a job may tighten, every field."""
    return {
        "name": name,
        "jobs_may_choose": selectable(name, policy),
        "job_may_tighten": sorted(JOB_OVERRIDABLE),
        **policy.model_dump(mode="json"),
    }


def _seconds(value: Any) -> str:
    return f"{value.total_seconds():g} s"


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    policies = sorted(settings.policies.items())
    if args.json:
        print_json_lines(row(name, policy) for name, policy in policies)
        return 0
    print(f"{'POLICY':20} {'CHOOSABLE':9} {'MODE':8} {'HANG':>8} {'START-UP':>8} {'ATTEMPTS':>8} {'NO-CKPT':>7}")
    for name, policy in policies:
        print(
            f"{name:20} {'yes' if selectable(name, policy) else 'no':9} {policy.mode or 'cluster':8} "
            f"{_seconds(policy.hang_budget):>8} {_seconds(policy.startup_grace):>8} {policy.max_attempts:>8} "
            f"{policy.max_attempts_without_checkpoint:>7}"
        )
    print(f"a job's comment may tighten: {', '.join(sorted(JOB_OVERRIDABLE))}")
    return 0
