"""Finding the node a log line is about, and the time it was written.

A line can name its node in many ways; :func:`locate` returns the possible
answers in the order the signature's locator prefers, as *location keys*
(``("node", "node3")``, ``("rank", 3)``, ``("addr", "10.0.0.3")``). They are
resolved to node names only when the diagnosis is made, because the rank
layout or an NCCL address may be learned from a line printed later.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from lazarus.detection.catalogue import Locator

LocationKey = tuple[str, str | int]

SRUN_LABEL = re.compile(r"^\s*(\d{1,6}): ")
RANK_TAG = re.compile(r"\[[Rr]ank ?(\d{1,6})\]")
# NCCL's debug prefix: host:pid:tid [cudaDev]
NCCL_HOST = re.compile(r"(?:^|\s)([A-Za-z][\w.-]*):\d+:\d+ \[\d+\] NCCL ")
# syslog / journal: "May  1 12:00:03 node3 kernel:" or "2024-05-01T12:00:03+00:00 node3 kernel:"
SYSLOG_HOST = re.compile(
    r"^(?:\d+: )?(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*)\s+([A-Za-z][\w.-]*)\s+[\w./-]+(?:\[\d+\])?:"
)
SRUN_NODE = re.compile(r"srun: error: ([A-Za-z][\w.-]*): task \d+")

_MONTHS = {
    m: i
    for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1)
}
ISO_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
SYSLOG_TS = re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([ \d]\d) (\d\d):(\d\d):(\d\d)\b")
GLOG_TS = re.compile(r"\[?[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")


def _seconds(year: int, month: int, day: int, hh: int, mm: int, ss: int, frac: str | None) -> float | None:
    try:
        base = datetime(year, month, day, hh, mm, ss, tzinfo=UTC).timestamp()
    except ValueError:
        return None
    return base + (float("0." + frac) if frac else 0.0)


def parse_timestamp(line: str, default_year: int) -> tuple[float | None, int | None]:
    """Seconds (UTC, zone ignored) of the first timestamp in the line, and the year it names if any.

    Formats without a year (syslog, glog) take ``default_year``: the year of the
    last full timestamp seen, so that mixed sources still compare.
    """
    head = line[:120]  # timestamps sit at the start (or, for Slurm's "CANCELLED AT", close to it)
    found = ISO_TS.search(head)
    if found:
        y, mo, d, hh, mm, ss = (int(g) for g in found.groups()[:6])
        return _seconds(y, mo, d, hh, mm, ss, found.group(7)), y
    found = SYSLOG_TS.search(head)
    if found:
        hh, mm, ss = (int(found.group(i)) for i in (3, 4, 5))
        return _seconds(default_year, _MONTHS[found.group(1)], int(found.group(2)), hh, mm, ss, None), None
    found = GLOG_TS.search(head)
    if found:
        mo, d, hh, mm, ss = (int(found.group(i)) for i in range(1, 6))
        return _seconds(default_year, mo, d, hh, mm, ss, found.group(6)), None
    return None, None


def _group(match: re.Match[str], name: str) -> str | None:
    try:
        return match.group(name)
    except IndexError:
        return None


def _rank_keys(line: str, match: re.Match[str]) -> list[LocationKey]:
    keys: list[LocationKey] = []
    if rank := _group(match, "rank"):
        keys.append(("rank", int(rank)))
    if label := SRUN_LABEL.match(line):
        keys.append(("rank", int(label.group(1))))
    if "ank" in line and (tag := RANK_TAG.search(line)):
        keys.append(("rank", int(tag.group(1))))
    return keys


# A host that logs under its loopback name names no node of a cluster (a syslog written before the host name was
# set, or a desktop's): such a line is still read, but it blames nobody.
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6"})


def _host_keys(line: str, match: re.Match[str]) -> list[LocationKey]:
    names: list[str] = []
    # Literal guards keep the regexes off lines that cannot match (this runs for every matched line).
    if " NCCL " in line and (found := NCCL_HOST.search(line)):
        names.append(found.group(1))
    if (found := SYSLOG_HOST.match(line)) is not None:
        names.append(found.group(1))
    if "srun: error: " in line and (found := SRUN_NODE.search(line)):
        names.append(found.group(1))
    return [("node", name) for name in names if name.lower() not in LOOPBACK_NAMES]


def locate(line: str, match: re.Match[str], locator: Locator) -> list[LocationKey]:
    """Location keys for a matched line, most trustworthy first for this ``locator``."""
    if locator is Locator.NONE:
        return []
    named: list[LocationKey] = []
    if node := _group(match, "node"):
        named.append(("nodes", node))  # may be a hostlist expression
    if locator is Locator.SLURM_NODE:
        return named + _host_keys(line, match)
    if locator is Locator.NCCL_PEER:
        peer = _group(match, "peer")
        return ([("addr", peer)] if peer else []) + named + _host_keys(line, match) + _rank_keys(line, match)
    if locator is Locator.RANK:
        return named + _rank_keys(line, match) + _host_keys(line, match)
    if locator is Locator.KERNEL:
        return named + _host_keys(line, match) + _rank_keys(line, match)
    return named + _host_keys(line, match) + _rank_keys(line, match)
