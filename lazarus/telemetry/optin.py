"""The opt-in contract: a job's Slurm comment holds ``{"lazarus": {"policy": "default", ...}}``.

A job may name the policy called ``default`` or a policy the operator marked
``selectable``; any other name is refused like an unknown one. Extra keys in the
``lazarus`` object override policy fields, but only those in ``JOB_OVERRIDABLE``,
and only to tighten the operator's policy: a shorter hang budget or start-up
grace, fewer attempts, monitor mode, ``"on_stop": "cancel"`` (a stopped job gives
its allocation back; see ``OnStop.rank``). A request to loosen it is clamped to the
policy's own value, with a note. Anything else is an error the job's workflow
records (state ``ignored``) so the user can see why Lazarus is not watching
their job. Other top-level keys are the job's own and Lazarus leaves them alone:
:func:`opt_in_comment` keeps a comment the user had before opting in under
``"comment"`` (``{"lazarus": {...}, "comment": "team=nlp"}``).

A job that asks for ``"mode": "act"`` is accepted: a job cannot choose act mode,
so the request is either not needed (the policy already acts, or the cluster is
in act mode) or clamped to the mode the policy or cluster gives it. Either way
the opt-in carries a note saying so, which ``lazarus show`` prints. So does a
``hang_budget`` or ``startup_grace`` the policy's one clamp raised to its
minimum hang budget or lowered to its maximum.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from lazarus.errors import JobCommentError, shorten
from lazarus.models.policy import JOB_OVERRIDABLE, ExpeditePolicy, HangPhase, Mode, OnStop, Policy

MAX_COMMENT_BYTES = 4096
DEFAULT_POLICY = "default"
OWN_COMMENT_KEY = "comment"  # where opt_in_comment keeps a comment that was not a JSON object


@dataclass(frozen=True)
class OptIn:
    policy_name: str
    policy: Policy
    notes: tuple[str, ...] = ()  # what Lazarus did with the request beyond applying it (e.g. act clamped)


def mentions_lazarus(comment: str) -> bool:
    """Cheap test: is this comment meant for Lazarus at all? (Other jobs are ignored silently.)"""
    return "lazarus" in comment.lower()


def opt_in_comment(policy: str | None, own: str | None = None) -> str:
    """The comment that opts a job in with ``policy`` (None: the one ``own`` names, else the default),
    keeping the job's own comment ``own``.

    - no own comment: ``{"lazarus": {"policy": P}}``;
    - a JSON object: the ``lazarus`` object is added, or its ``policy`` replaced; every other key stays;
    - any other text: ``{"lazarus": {"policy": P}, "comment": "<own text>"}``.

    The result is what :func:`parse_opt_in` reads; whether it names a known policy is its business.
    """
    own = (own or "").strip()
    data = _json_object(own) if own else {}
    if data is None:
        data = {"lazarus": {}, OWN_COMMENT_KEY: own}
    section = data.setdefault("lazarus", {})
    if not isinstance(section, dict):
        raise JobCommentError(
            f"""the job's comment has a "lazarus" key that is not an object ({shorten(own, 120)}); """
            """remove it or make it e.g. {"lazarus": {"policy": "default"}}"""
        )
    if policy is not None or "policy" not in section:
        section["policy"] = policy or DEFAULT_POLICY
    data["lazarus"] = {"policy": section.pop("policy"), **section}  # policy first, for people reading it
    return json.dumps(data)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def requested_policy(comment: str) -> str | None:
    """The policy name a comment asks for, valid or not (None when the comment does not say readably)."""
    data = _json_object(comment)
    section = data.get("lazarus") if data else None
    if not isinstance(section, dict):
        return None
    name = section.get("policy", DEFAULT_POLICY)
    return name if isinstance(name, str) else None


def parse_opt_in(comment: str, policies: dict[str, Policy], cluster_mode: Mode | None = None) -> OptIn:
    """Parse a job comment into the policy that applies, or raise :class:`JobCommentError`.

    ``cluster_mode`` (None: not known here) only words the note on a request for act mode.
    """
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
        raise JobCommentError(
            """job comment must be a JSON object with a "lazarus" object, e.g. """
            """{"lazarus": {"policy": "default"}}"""
        )
    section = dict(data["lazarus"])
    name = section.pop("policy", DEFAULT_POLICY)
    if not isinstance(name, str) or name not in policies:
        raise JobCommentError(
            f"unknown policy {shorten(repr(name), 80)} in job comment; a job may choose: {known_policies(policies)}"
        )
    if not selectable(name, policies[name]):
        raise JobCommentError(
            f"policy {shorten(repr(name), 80)} is not selectable by jobs (the operator has not "
            f"marked it selectable); a job may choose: {known_policies(policies)}"
        )
    base = policies[name]
    mode = section.pop("mode", None)
    unknown = sorted(set(section) - JOB_OVERRIDABLE)
    if unknown:
        raise JobCommentError(
            f"job comment sets {shorten(', '.join(unknown), 120)}, which a job may not override; "
            f"allowed: {', '.join(sorted(JOB_OVERRIDABLE))}, mode"
        )
    return _apply_overrides(name, base, section, mode, cluster_mode)


def selectable(name: str, policy: Policy) -> bool:
    """Whether a job may name this policy: the default always, any other only when the operator says so."""
    return name == DEFAULT_POLICY or policy.selectable


def known_policies(policies: dict[str, Policy]) -> str:
    """The policy names a job may choose, for messages."""
    return ", ".join(sorted(name for name, policy in policies.items() if selectable(name, policy)))


def _apply_overrides(
    name: str, base: Policy, overrides: dict[str, Any], mode: object, cluster_mode: Mode | None
) -> OptIn:
    merged = base.model_dump() | overrides
    if mode is not None:
        merged["mode"] = mode
    try:
        policy = Policy.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise JobCommentError(f"job comment override {where}: {first['msg']}") from None
    notes = []
    if policy.mode == Mode.ACT and mode is not None:
        notes.append(_act_request_note(name, base, cluster_mode))
        policy = policy.model_copy(update={"mode": base.mode})  # a job may ask for monitor, never choose act
    # a job may tighten, never loosen, the operator's policy; hang budgets go through the policy's one clamp
    tightened = _tightened(base, policy)
    notes += [
        _loosen_note(name, field, getattr(policy, field), getattr(tightened, field))
        for field in sorted(overrides)
        if getattr(tightened, field) != getattr(policy, field)
    ]
    policy = tightened
    return OptIn(policy_name=name, policy=policy, notes=tuple(notes))


def _tightened(base: Policy, asked: Policy) -> Policy:
    """``asked`` with every job-overridable field no looser than ``base``: budgets no longer (and within the
    policy's clamp), attempt limits no higher."""
    return asked.model_copy(
        update={
            "hang_budget": base.clamp_hang_budget(min(asked.hang_budget, base.hang_budget), HangPhase.TRAINING),
            "startup_grace": base.clamp_hang_budget(min(asked.startup_grace, base.startup_grace), HangPhase.STARTUP),
            "max_attempts": min(asked.max_attempts, base.max_attempts),
            "max_attempts_without_checkpoint": min(
                asked.max_attempts_without_checkpoint, base.max_attempts_without_checkpoint
            ),
            "on_stop": max(asked.on_stop, base.on_stop, key=lambda choice: OnStop(choice).rank),
            "expedite": base.expedite.tightened(asked.expedite),
        }
    )


def _loosen_note(name: str, field: str, asked: Any, given: Any) -> str:
    """What became of an override the policy did not allow as asked, in one sentence."""
    if isinstance(asked, ExpeditePolicy):
        return (
            f"expedite {asked.model_dump()} changed to {given.model_dump()}: a job may turn the expedite off, "
            f"never on, in policy {name!r}"
        )
    if isinstance(asked, OnStop):
        return f"on_stop {asked.value} changed to {OnStop(given).value}: a job may only tighten policy {name!r}"
    shown_asked, shown_given = (_s(asked), _s(given)) if isinstance(asked, timedelta) else (asked, given)
    if given > asked:  # below the policy's floor (hang_budget_min)
        return f"{field} {shown_asked} raised to the policy's minimum hang budget {shown_given}"
    return f"{field} {shown_asked} lowered to {shown_given}: a job may only tighten policy {name!r}"


def _s(value: timedelta) -> str:
    return f"{value.total_seconds():.10g} s"


def _act_request_note(name: str, base: Policy, cluster_mode: Mode | None) -> str:
    """What became of a comment's ``"mode": "act"``, in one sentence."""
    asked = 'the comment asks for "mode": "act"'
    if base.mode == Mode.ACT:
        return f"{asked}; not needed: policy {name!r} already acts"
    if base.mode == Mode.MONITOR:
        return f"{asked}, but policy {name!r} runs in monitor mode and a job may not loosen it: clamped to monitor"
    if cluster_mode == Mode.ACT:
        return f"{asked}; not needed: the cluster is in act mode (a job follows the cluster's mode)"
    if cluster_mode == Mode.MONITOR:
        return (
            f"{asked}, which a job may not choose: clamped to the cluster's monitor mode "
            "(an operator may switch the job with `lazarus mode act --job JOBID`)"
        )
    return f"{asked}, which a job may not choose: the job follows the cluster's mode"
