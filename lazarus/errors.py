"""Error types that cross module boundaries.

Every error a user can see derives from :class:`LazarusError` and carries a
one-sentence message that names the problem and, where possible, the fix. The
CLI prints ``str(error)`` and exits with ``error.exit_code``; it never shows a
traceback for these.
"""

from __future__ import annotations


class LazarusError(Exception):
    """Base class for errors reported to a user as one clear sentence."""

    exit_code: int = 2


class ConfigError(LazarusError):
    """The configuration file or environment is invalid."""


class JobCommentError(LazarusError):
    """A job's Slurm comment is not a valid Lazarus opt-in."""


class LogReadError(LazarusError):
    """A log file cannot be read (missing, unreadable, not a file)."""


class DevStackError(LazarusError):
    """The embedded local stack could not be started or stopped."""


def shorten(text: str, limit: int = 200) -> str:
    """Return ``text`` cut to ``limit`` characters with a marker, for error messages.

    Control characters are escaped (``\\n``, ``\\x1b``): the text is often a job's own output or
    comment, and a message must stay one line that cannot drive the terminal it is printed on.
    """
    if not text.isprintable():
        text = "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"
