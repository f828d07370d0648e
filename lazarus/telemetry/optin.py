"""The opt-in contract: a job's Slurm comment holds ``{"lazarus": {"policy": "default", ...}}``.

Extra keys override policy fields, but only those in ``JOB_OVERRIDABLE`` and
only within the operator's bounds. Anything else is an error the job's
workflow records (state ``ignored``) so the user can see why Lazarus is not
watching their job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from lazarus.errors import JobCommentError, shorten
from lazarus.models.policy import JOB_OVERRIDABLE, Mode, Policy

MAX_COMMENT_BYTES = 4096


@dataclass(frozen=True)
class OptIn:
    policy_name: str
    policy: Policy


def mentions_lazarus(comment: str) -> bool:
    """Cheap test: is this comment meant for Lazarus at all? (Other jobs are ignored silently.)"""
    return "lazarus" in comment.lower()


def parse_opt_in(comment: str, policies: dict[str, Policy]) -> OptIn:
    """Parse a job comment into the policy that applies, or raise :class:`JobCommentError`."""
    size = len(comment.encode(errors="surrogatepass"))  # a lone surrogate (from a JSON escape) is no crash
    if size > MAX_COMMENT_BYTES:
        raise JobCommentError(f"job comment is {size} bytes; the limit is {MAX_COMMENT_BYTES}")
    try:
        data = json.loads(comment)
    except json.JSONDecodeError as exc:
        raise JobCommentError(
            f"job comment is not valid JSON ({exc.msg} at character {exc.pos}): {shorten(comment, 120)}; "
            """expected e.g. {"lazarus": {"policy": "default"}}"""
        ) from None
    except RecursionError:
        raise JobCommentError(
            """job comment nests JSON too deeply; expected e.g. {"lazarus": {"policy": "default"}}"""
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("lazarus"), dict):
        raise JobCommentError("""job comment must be a JSON object with a "lazarus" object, e.g. """
                              """{"lazarus": {"policy": "default"}}""")
    section = dict(data["lazarus"])
    name = section.pop("policy", "default")
    if not isinstance(name, str) or name not in policies:
        known = ", ".join(sorted(policies))
        raise JobCommentError(f"unknown policy {shorten(repr(name), 80)} in job comment; known policies: {known}")
    base = policies[name]
    mode = section.pop("mode", None)
    unknown = sorted(set(section) - JOB_OVERRIDABLE)
    if unknown:
        raise JobCommentError(
            f"job comment sets {shorten(', '.join(unknown), 120)}, which a job may not override; "
            f"allowed: {', '.join(sorted(JOB_OVERRIDABLE))}, mode"
        )
    return _apply_overrides(name, base, section, mode)


def _apply_overrides(name: str, base: Policy, overrides: dict, mode: object) -> OptIn:
    merged = base.model_dump() | overrides
    if mode is not None:
        merged["mode"] = mode
    try:
        policy = Policy.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise JobCommentError(f"job comment override {where}: {first['msg']}") from None
    if policy.mode is not None and policy.mode != base.mode and policy.mode == Mode.ACT and base.mode != Mode.ACT:
        raise JobCommentError("a job may ask for monitor mode in its comment, but not for act mode")
    # a job may tighten, never loosen, the operator's limits
    policy = policy.model_copy(update={
        "hang_budget": min(max(policy.hang_budget, base.hang_budget_min), base.hang_budget_max),
        "startup_grace": min(policy.startup_grace, max(base.startup_grace, base.hang_budget_max)),
        "max_attempts": min(policy.max_attempts, base.max_attempts),
        "max_attempts_without_checkpoint": min(policy.max_attempts_without_checkpoint,
                                               base.max_attempts_without_checkpoint),
    })
    return OptIn(policy_name=name, policy=policy)
