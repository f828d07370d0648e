"""What the CLI prints can never drive the terminal it is printed on.

Much of it is the job user's own text: the policy a comment names, log lines kept as evidence, file names in
telemetry notes. A terminal escape in it (``ESC ] 0 ; title BEL``, ``ESC [ 2 J``), a carriage return or a NUL
would act on the operator's terminal instead of being shown. :class:`TerminalSafe` wraps the CLI's standard
output and writes every character that is not printable, newlines and tabs aside, as its escape (``\\x1b``,
``\\r``, ``\\u202e``), the way :func:`lazarus.errors.shorten` does for messages. JSON output is unchanged: the
encoder already escapes such characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TextIO

_KEPT = frozenset("\n\t")


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal could act on written as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in _KEPT else repr(c)[1:-1] for c in text)


class TerminalSafe:
    """A text stream that writes through :func:`terminal_safe`; everything else goes to the wrapped stream."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
