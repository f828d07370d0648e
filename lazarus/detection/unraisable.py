"""The traceback CPython prints for an exception it ignored, which ended nothing.

When an exception escapes a destructor (``__del__``), an atexit callback, a weakref callback or a thread at
interpreter shutdown, CPython cannot raise it: ``PyErr_WriteUnraisable`` prints ``Exception ignored in: <obj>``
(libpython3.11 3.11.2, strings: "Exception ignored in: ", "Exception ignored %s", "Exception ignored in atexit
callback") followed by the usual traceback, and the program carries on (or had already finished). Read as lines,
that traceback's frames and its exception line look like a crash of the program; this tracker lets the engine
set them aside. It is bounded: only the generic traceback signatures are set aside (a specific failure named in
an ignored exception still counts), only in the file of the note, only up to the first exception line, and only
within ``MAX_BLOCK_LINES`` lines of the note.
"""

from __future__ import annotations

#: The benign signature that reads ``Exception ignored in ...``.
NOTE_ID = "python_unraisable_exception"
#: The signatures that read a traceback's header, frames and exception line without naming a cause.
GENERIC_PARTS = frozenset({"generic_uncaught_traceback", "python_exception"})
#: The exception line that ends the ignored traceback.
EXCEPTION_LINE_ID = "python_exception"
MAX_BLOCK_LINES = 200


class UnraisableBlock:
    """Where an ignored exception's traceback is being printed (one file, a bounded run of lines)."""

    def __init__(self) -> None:
        self._file: str | None = None
        self._start = 0

    def open(self, file: str, line_no: int) -> None:
        """An ``Exception ignored`` note was read: its traceback follows."""
        self._file, self._start = file, line_no

    def swallows(self, file: str, line_no: int, signature_id: str) -> bool:
        """Whether a line the generic traceback signatures matched belongs to the ignored traceback."""
        if self._file is None:
            return False
        inside = file == self._file and 0 <= line_no - self._start <= MAX_BLOCK_LINES
        if not inside or signature_id not in GENERIC_PARTS:
            self._file = None
            return False
        if signature_id == EXCEPTION_LINE_ID:
            self._file = None
        return True
