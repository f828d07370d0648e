"""Validation of every value that reaches a Slurm command line.

The SSH transport hands a string to a remote shell, so a value that slipped
through here could run arbitrary commands on the login node. Nothing is
escaped "to be safe" instead: values are checked against what Slurm itself
accepts and anything else is refused with :class:`InvalidArgumentError`
before a process is started. Free text that Slurm stores as it is (a job
comment, the options and script of a submission) is refused only for
control characters and size: it is one argv element, never shell syntax.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import hostlist

from lazarus import hostlists
from lazarus.slurm.errors import InvalidArgumentError

# Slurm job ids are 32-bit unsigned; 0 is never a job.
_MAX_JOB_ID = 2**32 - 1
# One node name: what Slurm's node name grammar allows (letters, digits, '-', '_', '.').
_NODE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$")
# A hostlist expression before expansion: names plus brackets, ranges and commas only.
_HOSTLIST_EXPR = re.compile(r"^[A-Za-z0-9._\-\[\],]+$")
# Protect against "node[1-99999999]" style expansions that would stall the worker.
_MAX_NODES = 65536
_MAX_REASON = 200
# The opt-in parser's limit (lazarus.telemetry.optin.MAX_COMMENT_BYTES): a longer comment could never opt in.
_MAX_COMMENT_BYTES = 4096
_MAX_SBATCH_ARGS = 256
_MAX_SBATCH_ARG = 4096


def job_id(value: object) -> int:
    """Return ``value`` as a job id, or refuse anything but a positive integer (as int or decimal string)."""
    if isinstance(value, bool):
        raise InvalidArgumentError(f"job id must be a positive integer, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        number = int(value)
    else:
        raise InvalidArgumentError(f"job id must be a positive integer, got {value!r}")
    if not 0 < number <= _MAX_JOB_ID:
        raise InvalidArgumentError(f"job id must be between 1 and {_MAX_JOB_ID}, got {number}")
    return number


_MAX_PRIORITY = 0xFFFFFFFD  # uint32, less the values Slurm reserves for "infinite" and "no value"


def priority(value: object) -> int:
    """Return ``value`` as a job priority to set, or refuse it: a positive integer Slurm can store (0 would hold)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_PRIORITY:
        raise InvalidArgumentError(f"priority must be an integer between 1 and {_MAX_PRIORITY}, got {value!r}")
    return value


def node_names(values: Iterable[str]) -> list[str]:
    """Expand hostlist expressions (``node[1-3]``) into sorted, unique, validated node names.

    Both the expression and every expanded name are checked: ``expand_hostlist``
    alone passes through text such as ``node;rm`` untouched.
    """
    names: set[str] = set()
    for expr in values:
        if not isinstance(expr, str) or not _HOSTLIST_EXPR.match(expr):
            raise InvalidArgumentError(f"node list {expr!r} is not a valid Slurm hostlist")
        try:
            expanded = hostlists.expand(expr, _MAX_NODES)
        except hostlist.BadHostlist as exc:
            raise InvalidArgumentError(f"node list {expr!r} is not a valid Slurm hostlist: {exc}") from None
        for name in expanded:
            if not _NODE_NAME.match(name):
                raise InvalidArgumentError(f"node name {name!r} is not a valid Slurm node name")
            names.add(name)
            if len(names) > _MAX_NODES:
                raise InvalidArgumentError(f"node list names more than {_MAX_NODES} nodes")
    return sorted(names, key=_natural_key)


def hostlist_expr(names: Iterable[str]) -> str:
    """The compact hostlist form (``node[1-2,4]``) of already validated names, for a command line."""
    expr: str = hostlist.collect_hostlist(list(names))
    return expr


def reason(text: str, *, default: str) -> str:
    """A reason string for ``Reason=``: printable, one line, at most 200 characters; ``default`` when empty."""
    text = (text or "").strip()
    if not text:
        return default
    _refuse_control_characters("reason", text)
    if len(text) > _MAX_REASON:
        raise InvalidArgumentError(f"reason is {len(text)} characters long; at most {_MAX_REASON} are allowed")
    return text


def comment(text: str) -> str:
    """A job comment: one line of printable text, at most 4096 bytes, surrounding blanks removed.

    Quotes, ``;``, ``$( )`` and the like are plain data here: they reach Slurm
    as one argv element (over SSH quoted by :func:`shlex.join`), never a shell.
    Blanks are stripped because ``scontrol show job`` prints the value stripped,
    so a padded comment could never be verified.
    """
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"comment must be non-empty text, got {text!r}")
    text = text.strip()
    _refuse_control_characters("comment", text)
    size = len(text.encode())
    if size > _MAX_COMMENT_BYTES:
        raise InvalidArgumentError(f"comment is {size} bytes long; at most {_MAX_COMMENT_BYTES} are allowed")
    return text


def sbatch_args(args: Iterable[str], *, adds_comment: bool) -> list[str]:
    """sbatch options, script and script arguments: printable strings only, passed on as data.

    ``adds_comment`` means the caller sets ``--comment`` itself, so the
    arguments may not carry a second, conflicting one.
    """
    values = list(args)
    if not values:
        raise InvalidArgumentError("sbatch needs at least a batch script")
    if len(values) > _MAX_SBATCH_ARGS:
        raise InvalidArgumentError(f"{len(values)} sbatch arguments; at most {_MAX_SBATCH_ARGS} are allowed")
    for value in values:
        if not isinstance(value, str) or not value:
            raise InvalidArgumentError(f"sbatch argument must be non-empty text, got {value!r}")
        if len(value) > _MAX_SBATCH_ARG:
            raise InvalidArgumentError(f"an sbatch argument is {len(value)} characters; at most {_MAX_SBATCH_ARG}")
        _refuse_control_characters("sbatch argument", value)
        if adds_comment and (value == "--comment" or value.startswith("--comment=")):
            raise InvalidArgumentError("the sbatch arguments carry their own --comment besides the one to set")
    return values


def _refuse_control_characters(what: str, text: str) -> None:
    bad = [ch for ch in text if unicodedata.category(ch).startswith("C")]
    if bad:
        raise InvalidArgumentError(f"{what} must not contain control characters (found {bad[0]!r})")


def _natural_key(name: str) -> list[object]:
    """Sort node2 before node10, as people and Slurm do."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
