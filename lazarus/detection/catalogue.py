"""The signature catalogue: data in ``signatures.yaml``, validated here.

A signature describes one kind of log line: how to recognise it (keywords for
the prefilter, then regexes), what it means (failure kind, category, retry
advice), where it happened (the node locator) and how it relates to other lines
of the same failure (its role: a root cause, a victim of someone else's failure,
an advisory health warning, or benign noise that must never trigger anything).

The file is validated strictly at load: unknown keys, duplicate ids, regexes
that do not compile, and examples that the signature does not match are all
rejected with a message naming the signature, so a bad edit fails the test
suite instead of silently mis-diagnosing jobs.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from lazarus.detection.advice_table import advise
from lazarus.detection.prefilter import KeywordFinder
from lazarus.detection.xids import ResolutionBucket, XidCode
from lazarus.errors import ConfigError
from lazarus.models.diagnosis import Category, FailureKind, RetryAdvice


class Role(StrEnum):
    """How a matched line relates to the failure as a whole."""

    ROOT = "root"  # can be the cause of a failure
    VICTIM = "victim"  # a symptom of another rank's or node's failure (cascade); never blames its node
    ADVISORY = "advisory"  # a health warning: recorded in notes, never triggers a recovery by itself
    BENIGN = "benign"  # known noise: claims the line so that no other signature can match it


class Locator(StrEnum):
    """Where to look, first, for the node a matched line is about."""

    RANK = "rank"  # srun --label prefix or [Rank N], mapped through the rank layout
    HOSTNAME = "hostname"  # NCCL's host:pid:tid prefix, a syslog host, a known node name
    KERNEL = "kernel"  # the host of a syslog/journal kernel line (NVRM, AER, mlx5, oom-kill)
    NCCL_PEER = "nccl_peer"  # the peer address named in the line, mapped through learned NCCL addresses
    SLURM_NODE = "slurm_node"  # a node (or hostlist) named by a Slurm message
    NONE = "none"  # the line says nothing about a node


class Signature(BaseModel):
    """One catalogue entry. See docs/adding-a-signature.md for the meaning of each field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    family: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    keywords: list[str] = Field(min_length=1)
    patterns: list[str] = Field(min_length=1)
    role: Role = Role.ROOT
    failure_kind: FailureKind = FailureKind.CRASH
    category: Category = Category.UNKNOWN
    retry_advice: RetryAdvice | None = Field(
        None, description="default: the decision table's advice (lazarus.detection.advice_table)"
    )
    advice_reason: str | None = Field(None, description="why retry_advice differs from the decision table")
    locator: Locator = Locator.RANK
    severity: int = Field(ge=0, le=100, description="rank among root candidates; higher = more specific/stronger")
    confidence: float = Field(0.8, gt=0.0, le=1.0)
    implicates_node: bool | None = Field(None, description="default: true when the advice excludes nodes")
    min_count: int = Field(1, ge=1, description="lines needed before this can be a failure's root")
    answers_a_finished_file: bool = Field(
        False,
        description="advisory only: a report that carries its own measure (a stall inspector's 'more than 60 "
        "seconds', a GPU's clocks-event reason) or one the program recovers from by itself (TensorFlow recreating "
        "its session after losing a worker); a finished file with no failure finding is answered with its "
        "failure_kind (lazarus.detection.finished), while a live job keeps it a note",
    )
    report_details: list[str] = Field(
        default_factory=list,
        description="with answers_a_finished_file, for a hang report: the report answers only when one of these "
        "regular expressions matches its last line or a line after it (a stall inspector's list of the stalled "
        "operations and their ranks); a bare warning without them stays a note",
    )
    xids: list[XidCode] = Field(default_factory=list, description="the NVIDIA Xid codes this signature stands for")
    explanation: str
    doc: str
    examples: list[str] = Field(min_length=1)

    _regexes: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _detail_regexes: list[re.Pattern[str]] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Signature:
        if self.role in (Role.ROOT, Role.VICTIM):
            # Node evidence: the signature says its line names a node at fault (implicates_node, or, left
            # unset, an advice to exclude the node).
            blames = self.implicates_node
            if blames is None:
                blames = self.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES
            table = advise(self.failure_kind, self.category, node_evidence=blames)
            if self.retry_advice is None:
                object.__setattr__(self, "retry_advice", table)
            elif self.retry_advice is not table and not self.advice_reason:
                raise ValueError(
                    f"{self.id}: retry_advice {self.retry_advice} overrides the decision table ({table}); "
                    "give advice_reason"
                )
        if self.answers_a_finished_file and (
            self.role is not Role.ADVISORY
            or self.failure_kind not in (FailureKind.HANG, FailureKind.STRAGGLER, FailureKind.CRASH)
        ):
            raise ValueError(f"{self.id}: answers_a_finished_file is for advisory hang, crash or straggler reports")
        if self.report_details and not (self.answers_a_finished_file and self.failure_kind is FailureKind.HANG):
            raise ValueError(f"{self.id}: report_details is for a hang report that answers a finished file")
        self._detail_regexes = _compiled(self.id, "report_details pattern", self.report_details)
        if self.role in (Role.BENIGN, Role.ADVISORY) and self.retry_advice is not None:
            raise ValueError(f"{self.id}: a {self.role} signature must not give retry_advice")
        self._regexes = _compiled(self.id, "pattern", self.patterns)
        for example in self.examples:
            if not any(k in example for k in self.keywords):
                raise ValueError(f"{self.id}: example {example!r} contains none of the keywords")
            if self.search(example) is None:
                raise ValueError(f"{self.id}: example {example!r} is not matched by any pattern")
        return self

    @property
    def blames_node(self) -> bool:
        if self.role is not Role.ROOT:
            return False
        if self.implicates_node is not None:
            return self.implicates_node
        return self.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES

    def search(self, line: str) -> re.Match[str] | None:
        for regex in self._regexes:
            found = regex.search(line)
            if found is not None:
                return found
        return None

    def shows_details(self, lines: list[str]) -> bool:
        """One of the ``report_details`` patterns matches one of ``lines`` (always true when there are none)."""
        return not self._detail_regexes or any(regex.search(line) for regex in self._detail_regexes for line in lines)


def _compiled(signature_id: str, what: str, sources: list[str]) -> list[re.Pattern[str]]:
    compiled = []
    for source in sources:
        try:
            compiled.append(re.compile(source))
        except re.error as exc:
            raise ValueError(f"{signature_id}: {what} {source!r} does not compile: {exc}") from exc
    return compiled


class XidMeaning(BaseModel):
    """Everything the catalogue says about one Xid code: the one answer both the log attribution and the
    node agent give."""

    model_config = ConfigDict(frozen=True)

    code: int
    name: str | None = Field(description="short meaning; None for a code the catalogue does not list")
    bucket: ResolutionBucket | None = Field(description="NVIDIA's immediate action; None when not listed")
    signature: str = Field(description="id of the signature that stands for the code")
    role: Role
    category: Category
    retry_advice: RetryAdvice | None
    excludes_node: bool = Field(description="the job restarts without the node, now")
    blames_node: bool = Field(description="the node is at fault: excluded now, or degrading (kept, but watched)")

    @classmethod
    def of(cls, code: int, sig: Signature, listed: XidCode | None) -> XidMeaning:
        excludes = sig.blames_node and sig.retry_advice is RetryAdvice.RETRY_EXCLUDING_NODES
        hardware_warning = sig.category is Category.HARDWARE and (sig.role is Role.ADVISORY or sig.blames_node)
        return cls(
            code=code,
            name=listed.name if listed else None,
            bucket=listed.bucket if listed else None,
            signature=sig.id,
            role=sig.role,
            category=sig.category,
            retry_advice=sig.retry_advice,
            excludes_node=excludes,
            blames_node=excludes or hardware_warning,
        )


class Catalogue(BaseModel):
    """All signatures, in matching order: the first signature that matches a line claims it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = 1
    unlisted_xid: str | None = Field(None, description="id of the signature that stands for any Xid not listed")
    signatures: list[Signature] = Field(min_length=1)

    _matcher: Matcher | None = PrivateAttr(None)
    _xids: dict[int, tuple[XidCode, Signature]] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _unique_ids(self) -> Catalogue:
        seen: set[str] = set()
        for sig in self.signatures:
            if sig.id in seen:
                raise ValueError(f"duplicate signature id {sig.id!r}")
            seen.add(sig.id)
            for xid in sig.xids:
                if xid.code in self._xids:
                    raise ValueError(f"Xid {xid.code} is listed by both {self._xids[xid.code][1].id} and {sig.id}")
                self._xids[xid.code] = (xid, sig)
        if self.unlisted_xid is not None and self.unlisted_xid not in seen:
            raise ValueError(f"unlisted_xid names no signature: {self.unlisted_xid!r}")
        self._matcher = Matcher(self.signatures)
        return self

    @property
    def keywords(self) -> list[str]:
        return [k for sig in self.signatures for k in sig.keywords]

    @property
    def trigger_keywords(self) -> list[str]:
        """Keywords that can make a line interesting. Benign signatures' keywords are left out: a benign
        line matters only when it also holds another keyword, so the prefilter never needs to stop at
        the (very common) NCCL INFO or warning lines."""
        return [k for sig in self.signatures if sig.role is not Role.BENIGN for k in sig.keywords]

    def get(self, signature_id: str) -> Signature:
        for sig in self.signatures:
            if sig.id == signature_id:
                return sig
        raise KeyError(signature_id)

    @property
    def xid_codes(self) -> list[int]:
        """Every Xid code the catalogue lists, ascending."""
        return sorted(self._xids)

    def xid(self, code: int) -> XidMeaning:
        """What Xid ``code`` means; a code no signature lists gets the ``unlisted_xid`` signature's meaning."""
        listed = self._xids.get(code)
        if listed is not None:
            return XidMeaning.of(code, listed[1], listed[0])
        if self.unlisted_xid is None:
            raise KeyError(f"Xid {code} is not listed and the catalogue names no unlisted_xid signature")
        return XidMeaning.of(code, self.get(self.unlisted_xid), None)

    def match(self, line: str) -> tuple[Signature, re.Match[str]] | None:
        """The first signature (in catalogue order) whose keyword and pattern both occur in ``line``."""
        return self.matcher.match(line)

    @property
    def matcher(self) -> Matcher:
        assert self._matcher is not None
        return self._matcher


class Matcher:
    """The hot path of :meth:`Catalogue.match`, in plain Python objects.

    Pydantic private attributes cost a ``__getattr__`` call each; for a flood
    of matching lines that dominated, so the lookup tables live here.
    """

    def __init__(self, signatures: list[Signature]) -> None:
        index: dict[str, list[int]] = {}
        for position, sig in enumerate(signatures):
            for keyword in sig.keywords:
                index.setdefault(keyword, []).append(position)
        # keyword -> positions of the signatures declaring it: one regex pass finds the keywords in a
        # line, and only those signatures' patterns are tried, in catalogue order.
        self._by_keyword = {k: tuple(v) for k, v in index.items()}
        self._finder = KeywordFinder(index)
        self._entries = [(sig, tuple(sig._regexes)) for sig in signatures]

    def match(self, line: str) -> tuple[Signature, re.Match[str]] | None:
        by_keyword = self._by_keyword
        positions = {p for keyword in self._finder.find(line) for p in by_keyword[keyword]}
        for position in sorted(positions):
            sig, regexes = self._entries[position]
            for regex in regexes:
                found = regex.search(line)
                if found is not None:
                    return sig, found
        return None


def parse_catalogue(data: Any, source: str) -> Catalogue:
    """Validate parsed YAML; a bad catalogue raises :class:`ConfigError` naming the problem."""
    try:
        return Catalogue.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(
            f"signature catalogue {source} is invalid at {where or 'top level'}: {first['msg']}"
        ) from None


def load_catalogue(path: Path | str | None = None) -> Catalogue:
    """Load a catalogue file, or the one shipped in the package when ``path`` is None."""
    if path is None:
        return default_catalogue()
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read signature catalogue {path}: {exc}") from None
    return parse_catalogue(data, str(path))


@cache
def default_catalogue() -> Catalogue:
    """The packaged catalogue, parsed once per process."""
    text = resources.files("lazarus.detection").joinpath("signatures.yaml").read_text(encoding="utf-8")
    return parse_catalogue(yaml.safe_load(text), "lazarus/detection/signatures.yaml")
